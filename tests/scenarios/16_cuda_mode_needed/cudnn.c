/* A fake cuDNN 9 dispatcher: DT_NEEDED of the executable, loads its graph
 * sub-library by bare name through RUNPATH $ORIGIN, and probes an optional
 * sub-library that this install does not have. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
size_t cudnnGetVersion(void) { return 90100; }
int cudnnCreate(void **handle) {
    void *g = dlopen("libcudnn_graph.so.9", RTLD_NOW | RTLD_LOCAL);
    printf("cudnn: dlopen(libcudnn_graph.so.9): %s\n", g ? "ok" : dlerror());
    /* optional sub-library, absent from this install (cuDNN >= 9.23 probes it) */
    void *t = dlopen("libcudnn_engines_tensor_ir.so.9", RTLD_NOW | RTLD_LOCAL);
    printf("cudnn: dlopen(libcudnn_engines_tensor_ir.so.9): %s\n", t ? "ok" : dlerror());
    *handle = g;
    return t ? 0 : 1;
}
