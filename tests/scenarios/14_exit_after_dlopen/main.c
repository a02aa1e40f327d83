#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    void *h = dlopen("libfirst.so", RTLD_NOW);
    printf("dlopen(libfirst.so): %s\n", h ? "ok" : dlerror());
    void *bad = dlopen("liblast-missing.so", RTLD_NOW);
    printf("dlopen(liblast-missing.so): %s\n", bad ? "ok" : "failed");
    /* the error text is never read; then leave without atexit handlers */
    dlopen("liblast.so", RTLD_NOW);
    _exit(7);
}
