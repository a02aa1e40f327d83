#include <dlfcn.h>
#include <stdio.h>
/* Its own constructor dlopens again: a nested load inside a load. */
__attribute__((constructor)) static void child_init(void) {
    void *h = dlopen("libgrandchild.so", RTLD_NOW);
    printf("child ctor: dlopen(libgrandchild.so): %s\n", h ? "ok" : dlerror());
}
int child_value(void) { return 42; }
