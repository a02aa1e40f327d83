/* Issue 10: the preload helper trusts the caller it checked last while no
 * object was unloaded. Here that caller is unloaded, and another library is
 * mapped at the same address with its _fini elsewhere (by a loader whose own
 * dlopen leaves the remembered caller alone): a hook that kept trusting the
 * old caller would return into int3 padding of the new one. Each caller
 * finds its own library through its own RUNPATH. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

typedef void *(*open_fn)(const char *);

static void *base_of(void *h)
{
    Dl_info i;
    return dladdr(dlsym(h, "open_it"), &i) ? i.dli_fbase : NULL;
}

/* The library stays loaded: only the first caller's own unload may change
   the count of unloads that the helper checks. */
static void use(const char *who, open_fn open_it, const char *name)
{
    void *t = open_it(name);
    if (!t) {
        printf("%s: %s failed\n", who, name);
        return;
    }
    printf("%s: %s from %s\n", who, name, ((const char *(*)(void))dlsym(t, "which"))());
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    void *a = dlopen("a/libcaller_a.so", RTLD_NOW);
    open_fn open_a = (open_fn)dlsym(a, "open_it");
    open_fn load = (open_fn)dlsym(dlopen("libloader.so", RTLD_NOW), "load");
    for (int i = 0; i < 3; i++)
        use("a", open_a, "libtarget_a.so");
    void *where = base_of(a);
    dlclose(a);
    void *b = load("b/libcaller_b.so");
    printf("b mapped where a was: %s\n", base_of(b) == where ? "yes" : "no");
    open_fn open_b = (open_fn)dlsym(b, "open_it");
    for (int i = 0; i < 3; i++)
        use("b", open_b, "libtarget_b.so");
    use("b", open_b, "libmissing_b.so");
    return 0;
}
