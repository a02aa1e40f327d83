/* Issue 14, item 4: glibc 2.36 still searches hardware-capability
 * subdirectories of every search directory: glibc-hwcaps/<level> (2.33+)
 * and the legacy tls and platform (x86_64) ones (gone in 2.37). The
 * directory a library was found in is that subdirectory, not its parent. */
#include <dlfcn.h>
#include <stdio.h>

static void open_one(const char *name)
{
    void *h = dlopen(name, RTLD_NOW);
    const char *(*id)(void) = h ? (const char *(*)(void))dlsym(h, "id") : NULL;
    printf("%s: %s\n", name, id ? id() : dlerror());
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    open_one("libhw_plat.so");
    open_one("libhw_tls.so");
    open_one("libhw_v2.so");
    open_one("libhw_rp.so");
    return 0;
}
