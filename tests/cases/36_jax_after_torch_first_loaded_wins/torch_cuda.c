/* Stand-in for torch/lib/libtorch_cuda.so: DT_NEEDED libcudnn.so.9 through
 * DT_RPATH $ORIGIN (cuDNN 9.1.0 in torch/lib). Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) size_t torch_cudnn_version(void)
{
    return cudnnGetVersion();
}
