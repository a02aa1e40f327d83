/* Issue 14, item 7: copies renamed by packaging and stubs that look like
 * the real thing, each opened by path; the program prints which one
 * answered. In `cuda` mode the renamed copies must still be recorded, as
 * their family (from the SONAME or what they define), and the stubs must be
 * labelled stubs; a library that is no CUDA library must not be. */
#include <dlfcn.h>
#include <stdio.h>

static void open_one(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const char *(*which)(void) = h ? (const char *(*)(void))dlsym(h, "which") : NULL;
    printf("%s: %s\n", path, which ? which() : dlerror());
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    open_one("wheel.libs/libcudart-8a3b2c1d.so.12");
    open_one("vendored/_cudart.so");
    open_one("vendored/libvcudnn.so");
    open_one("vendored/libvdrv.so.1");
    open_one("cuda/lib64/stubs/libcuda.so");
    open_one("tf/libcudart_stub.so");
    open_one("misc/libplain.so");
    return 0;
}
