/* Stand-in for torch/lib/libtorch_cuda.so of torch 2.1+cu121: DT_NEEDED
 * libcudart.so.12 and libcudnn.so.8 through DT_RPATH into the pip wheels.
 * Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) int torch_smoke(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1)
        return 1;
    if (cudnnGetVersion() != 8907)
        return 2;
    cudnnHandle_t h;
    if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS)
        return 3;
    if (cudnnOpsInferVersionCheck() || cudnnOpsTrainVersionCheck() || cudnnCnnInferVersionCheck() ||
        cudnnCnnTrainVersionCheck() || cudnnAdvInferVersionCheck() || cudnnAdvTrainVersionCheck())
        return 4;
    return cudnnDestroy(h) == CUDNN_STATUS_SUCCESS ? 0 : 5;
}
