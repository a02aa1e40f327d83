/* Stand-in for jaxlib 0.4.13's xla_extension.so (cuda11_pip): DT_RUNPATH
 * into the pip nvidia wheels, dlopen("libcudnn.so.8") from its own code, and
 * the cuDNN handle it creates. Sources: see main.c. */
#include <dlfcn.h>

#include "fake_api.h"

__attribute__((visibility("default"))) int xla_create_cudnn_handle(void)
{
    void *h = dlopen("libcudnn.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    cudnnStatus_t (*create)(cudnnHandle_t *) = (cudnnStatus_t(*)(cudnnHandle_t *))dlsym(h, "cudnnCreate");
    cudnnHandle_t handle;
    return create ? (int)create(&handle) : -1;
}
