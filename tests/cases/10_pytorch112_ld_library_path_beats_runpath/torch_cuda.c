/* Stand-in for torch/lib/libtorch_cuda.so of torch 1.12.0+cu113: DT_NEEDED
 * libcudnn.so.8 with DT_RUNPATH $ORIGIN (cuDNN 8.3.2 bundled in torch/lib).
 * Sources: see main.c. */
#include "fake_api.h"

/* torch._C._cudnn.getRuntimeVersion() */
__attribute__((visibility("default"))) void torch_cudnn_runtime(int v[3])
{
    for (int i = 0; i < 3; i++)
        cudnnGetProperty((libraryPropertyType)i, &v[i]);
}
