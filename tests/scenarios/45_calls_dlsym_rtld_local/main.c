/* TensorFlow/XLA's way (XLA's dso_loader.cc and load_library.cc, [R23] and
 * [R23b] in data/sources.toml): dlopen the cuDNN dispatcher RTLD_LOCAL and
 * call through dlsym(handle). The global scope must
 * not offer cuDNN or CUDA symbols the program has not loaded itself, before
 * or after (the shim exports none). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

#include "fake_api.h"

static const char *const global_names[] = {
    "cudnnCreate", "cudnnGetVersion", "cuInit", "cuDriverGetVersion",
    "cuGetProcAddress", "cuGetProcAddress_v2", "cudaRuntimeGetVersion",
};

static void probe_global(const char *when)
{
    for (size_t i = 0; i < sizeof global_names / sizeof global_names[0]; i++) {
        void *p = dlsym(RTLD_DEFAULT, global_names[i]);
        const char *e = p ? NULL : dlerror();
        printf("%s: dlsym(RTLD_DEFAULT, %s): %s\n", when, global_names[i],
               p ? "found" : (e ? e : "NULL, no error"));
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    probe_global("before");
    void *h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    size_t (*ver)(void) = (size_t (*)(void))dlsym(h, "cudnnGetVersion");
    size_t (*ver2)(void) = (size_t (*)(void))dlsym(h, "cudnnGetVersion");
    size_t (*vver)(void) =
        (size_t (*)(void))dlvsym(h, "cudnnGetVersion", "libcudnn.so.9");
    cudnnStatus_t (*prop)(libraryPropertyType, int *) =
        (cudnnStatus_t (*)(libraryPropertyType, int *))dlsym(h, "cudnnGetProperty");
    cudnnStatus_t (*create)(cudnnHandle_t *) =
        (cudnnStatus_t (*)(cudnnHandle_t *))dlsym(h, "cudnnCreate");
    cudnnStatus_t (*destroy)(cudnnHandle_t) =
        (cudnnStatus_t (*)(cudnnHandle_t))dlsym(h, "cudnnDestroy");
    if (!ver || !vver || !prop || !create || !destroy) {
        printf("dlsym failed\n");
        return 1;
    }
    printf("same pointer for the same name twice: %s\n", ver == ver2 ? "yes" : "no");
    printf("cudnnGetVersion() = %zu\n", ver());
    printf("cudnnGetVersion() via dlvsym = %zu\n", vver());
    int major = -1;
    cudnnStatus_t st = prop(MAJOR_VERSION, &major);
    printf("cudnnGetProperty(MAJOR) = %d, value %d\n", (int)st, major);
    cudnnHandle_t handle = NULL;
    st = create(&handle);
    printf("cudnnCreate() = %d\n", (int)st);
    printf("cudnnDestroy() = %d\n", (int)destroy(handle));
    probe_global("after");
    return 0;
}
