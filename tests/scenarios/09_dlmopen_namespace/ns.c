#define _GNU_SOURCE
/* Loaded twice: once in the base namespace, once in a new one. Each copy has
 * its own counter and its own libnsdep (DT_NEEDED through RUNPATH $ORIGIN/dep). */
#include <dlfcn.h>
#include <stdio.h>
int dep_value(void);
static int counter;
int bump(void) { return ++counter + dep_value(); }
const char *load_more(void) {
    /* a bare-name dlopen from inside the namespace: lands in the caller's
     * namespace, searched through this library's RUNPATH */
    void *h = dlopen("libnsextra.so", RTLD_NOW);
    if (!h) return dlerror();
    Dl_info info;
    int (*f)(void) = (int (*)(void))dlsym(h, "extra_value");
    return f && f() == 5 && dladdr((void *)f, &info) ? "libnsextra ok" : "libnsextra broken";
}
