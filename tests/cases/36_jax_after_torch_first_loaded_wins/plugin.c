/* Stand-in for JAX's CUDA plugin (built with cuDNN 9.8.0): DT_RUNPATH to the
 * pip nvidia wheels, dlopen("libcudnn.so.9") from its own code when the
 * backend initialises. Sources: see main.c. */
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
