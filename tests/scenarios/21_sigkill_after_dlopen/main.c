#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    void *h = dlopen("libfirst.so", RTLD_NOW);
    printf("dlopen(libfirst.so): %s\n", h ? "ok" : dlerror());
    dlopen("liblast.so", RTLD_NOW);
    raise(SIGKILL); /* no handler, no exit path: only what was written survives */
    return 0;
}
