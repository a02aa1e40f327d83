/* DT_NEEDED by the executable: its constructor runs before any LD_PRELOAD
 * library's constructor (init order: deps first, preloads after them), and
 * dlopens by bare name through this library's RUNPATH ($ORIGIN/sub). */
#include <dlfcn.h>
#include <stdio.h>
__attribute__((constructor)) static void early_init(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("early ctor: start\n");
    void *h = dlopen("libctorchild.so", RTLD_NOW);
    if (!h) { printf("early ctor: dlopen(libctorchild.so): %s\n", dlerror()); return; }
    int (*f)(void) = (int (*)(void))dlsym(h, "child_value");
    printf("early ctor: child_value() = %d\n", f ? f() : -1);
    void *bad = dlopen("libctormissing.so", RTLD_NOW);
    printf("early ctor: dlopen(libctormissing.so): %s\n", bad ? "unexpectedly ok" : dlerror());
}
int early_loaded(void) { return 1; }
