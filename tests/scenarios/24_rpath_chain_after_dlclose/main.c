#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
/* main (DT_RPATH lib) dlopens A, A dlopens B (found by A's RUNPATH), main
   dlcloses A (B stays: it has its own reference), then B dlopens a library
   found only through main's RPATH. glibc keeps no loader for dlopened
   objects, so the shim must not walk (freed) A's link map for RPATHs. */
int main(void) {
    for (int i = 0; i < 20; i++) {
        void *a = dlopen("a/liba.so", RTLD_NOW);
        if (!a) { printf("%s\n", dlerror()); return 1; }
        void *(*aob)(void) = (void *(*)(void))dlsym(a, "a_open_b");
        void *b = aob();
        if (!b) { printf("%s\n", dlerror()); return 1; }
        void *(*bo)(const char *) = (void *(*)(const char *))dlsym(b, "b_open");
        dlclose(a);
        for (int k = 0; k < 200; k++) { volatile char *p = malloc(1200); for (int j = 0; j < 1200; j++) p[j] = 0x41; }
        void *c = bo("libcudnn_fake.so");
        if (i == 0) printf("found through main's RPATH: %s\n", c ? "yes" : dlerror());
        if (c) dlclose(c);
        dlclose(b);
    }
    printf("20 rounds done\n");
    return 0;
}
