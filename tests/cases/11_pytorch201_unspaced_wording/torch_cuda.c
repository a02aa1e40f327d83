/* Stand-in for torch/lib/libtorch_cuda.so of torch 2.0.1+cu118: DT_NEEDED
 * libcudnn.so.8 through DT_RPATH $ORIGIN/../../nvidia/cudnn/lib.
 * Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) void torch_cudnn_runtime(int v[3])
{
    for (int i = 0; i < 3; i++)
        cudnnGetProperty((libraryPropertyType)i, &v[i]);
}
