/* Stand-in for torch/lib/libtorch_cuda.so: DT_NEEDED libcudnn.so.8 with
 * DT_RPATH $ORIGIN/../../nvidia/cudnn/lib. Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) size_t torch_cudnn_version(void)
{
    return cudnnGetVersion();
}
