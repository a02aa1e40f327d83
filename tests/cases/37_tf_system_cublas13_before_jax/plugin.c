/* Stand-in for jax_plugins/xla_cuda13's library: DT_RUNPATH into the pip
 * nvidia wheels (nvidia/cu13/lib), dlopen("libcublas.so.13") from its own
 * code for the version check. Sources: see main.c. */
#include <dlfcn.h>

#include "fake_api.h"

__attribute__((visibility("default"))) int jax_cublas_get_version(void)
{
    void *h = dlopen("libcublas.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    int (*get)(void *, int *) = (int (*)(void *, int *))dlsym(h, "cublasGetVersion_v2");
    int v = -1;
    if (!get || get(NULL, &v) != 0)
        return -1;
    return v;
}
