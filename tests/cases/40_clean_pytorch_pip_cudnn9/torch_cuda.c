/* Stand-in for torch/lib/libtorch_cuda.so of torch 2.9+cu130: DT_NEEDED
 * libcudart.so.13 and libcudnn.so.9 through DT_RPATH into the pip wheels
 * (the layout the wheels really have). Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) int torch_smoke(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1)
        return 1;
    if (cudnnGetVersion() != 91900)
        return 2;
    cudnnHandle_t h;
    if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS)
        return 3;
    if (cudnnOpsVersionCheck() || cudnnCnnVersionCheck() || cudnnAdvVersionCheck())
        return 4;
    return cudnnDestroy(h) == CUDNN_STATUS_SUCCESS ? 0 : 5;
}
