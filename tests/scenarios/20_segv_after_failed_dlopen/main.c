#include <dlfcn.h>
#include <stdio.h>
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    void *h = dlopen("libfirst.so", RTLD_NOW);
    printf("dlopen(libfirst.so): %s\n", h ? "ok" : dlerror());
    /* The pattern of cuDNN's "Unable to load any of {...}": the last thing
       before the crash is a failed load whose error nobody reads. */
    void *bad = dlopen("liblast-missing.so", RTLD_NOW);
    if (!bad) {
        volatile int *p = (volatile int *)0;
        *p = 42; /* SIGSEGV */
    }
    return 0;
}
