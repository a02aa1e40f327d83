/* Stand-in for conda-forge jaxlib's xla_extension.so (built with cuDNN
 * 9.13.1): DT_RUNPATH to the env's lib, dlopen("libcudnn.so.9") from its own
 * code. Sources: see main.c. */
#include <dlfcn.h>

#include "fake_api.h"

__attribute__((visibility("default"))) int xla_cudnn_version(int v[3])
{
    void *h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    cudnnStatus_t (*prop)(libraryPropertyType, int *) =
        (cudnnStatus_t(*)(libraryPropertyType, int *))dlsym(h, "cudnnGetProperty");
    if (!prop)
        return -1;
    for (int i = 0; i < 3; i++)
        prop((libraryPropertyType)i, &v[i]);
    return 0;
}
