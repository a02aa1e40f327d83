#include <dlfcn.h>
#include <stdio.h>
int early_loaded(void);
/* The executable's own constructor runs after the preloads' ones. */
__attribute__((constructor)) static void main_init(void) {
    void *h = dlopen("libctorchild.so", RTLD_NOW | RTLD_NOLOAD);
    printf("exe ctor: libctorchild.so loaded: %s\n", h ? "yes" : "no");
    void *g = dlopen("libexector.so", RTLD_NOW);
    printf("exe ctor: dlopen(libexector.so): %s\n", g ? "ok" : dlerror());
}
int main(void) {
    printf("main: early_loaded() = %d\n", early_loaded());
    return 0;
}
