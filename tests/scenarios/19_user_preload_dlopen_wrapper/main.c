#define _GNU_SOURCE /* RTLD_DEFAULT, RTLD_NEXT: glibc before 2.34 needs it */
#include <dlfcn.h>
#include <stdio.h>
static void open_(const char *name) {
    void *h = dlopen(name, RTLD_NOW);
    if (!h) { printf("dlopen(%s): %s\n", name, dlerror()); return; }
    printf("dlopen(%s): %s\n", name, ((const char *(*)(void))dlsym(h, "lib_where"))());
}
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    open_("libone.so");                 /* LD_LIBRARY_PATH */
    open_("plugins/libtwo.so");         /* by path */
    open_("libthree.so");               /* only in the executable's RUNPATH: the
                                           wrapper is the caller, so not found */
    int (*count)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "wrapper_calls");
    printf("the user's dlopen wrapper saw %d call(s)\n", count ? count() : -1);
    return 0;
}
