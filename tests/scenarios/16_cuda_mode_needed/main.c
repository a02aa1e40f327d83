#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
size_t cudnnGetVersion(void);
int cudnnCreate(void **handle);
int other_value(void);
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("cudnnGetVersion() = %zu\n", cudnnGetVersion());
    void *h = NULL;
    printf("cudnnCreate() = %d\n", cudnnCreate(&h));
    printf("other_value() = %d\n", other_value());
    void *rt = dlopen("cuda/libcudart.so.12", RTLD_NOW);
    printf("dlopen(cuda/libcudart.so.12): %s\n", rt ? "ok" : dlerror());
    void *p = dlopen("libplugin.so", RTLD_NOW);
    printf("dlopen(libplugin.so): %s\n", p ? "ok" : dlerror());
    return 0;
}
