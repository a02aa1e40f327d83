/* Stand-in for torch/lib/libtorch_cuda.so of torch 1.13.1: DT_NEEDED
 * libcudnn.so.8 with RUNPATH $ORIGIN:$ORIGIN/../../nvidia/cudnn/lib.
 * Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) size_t torch_cudnn_version(void)
{
    return cudnnGetVersion();
}
