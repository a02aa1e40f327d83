/* Stand-in for DJL's libtorch_cuda.so (PyTorch 2.0.1, cu118): DT_NEEDED
 * libcudnn.so.8. Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) size_t torch_cudnn_version(void)
{
    return cudnnGetVersion();
}
