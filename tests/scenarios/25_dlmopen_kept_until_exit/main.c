#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
/* A library in a second namespace that stays loaded until exit: _dl_fini
   closes it at exit, which is not an unload. */
int main(void) {
    void *h = dlmopen(LM_ID_NEWLM, "lib/libcudnn_ns.so.9", RTLD_NOW);
    if (!h) { printf("%s\n", dlerror()); return 1; }
    int (*f)(void) = (int (*)(void))dlsym(h, "ns_value");
    printf("ns_value=%d\n", f());
    return 0;
}
