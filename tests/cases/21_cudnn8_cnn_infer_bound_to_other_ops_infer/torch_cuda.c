/* Stand-in for torch/lib/libtorch_cuda.so: DT_NEEDED libcudnn.so.8 through
 * DT_RPATH into the pip wheel. Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) size_t torch_cudnn_version(void)
{
    return cudnnGetVersion();
}

__attribute__((visibility("default"))) int torch_conv(void)
{
    return (int)cudnnCnnInferVersionCheck();
}
