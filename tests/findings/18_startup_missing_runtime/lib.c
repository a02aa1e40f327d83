/* 18_startup_missing_runtime: libtorchlike.so, a library linked against the
 * CUDA 12 runtime as libtorch_cuda.so is (DT_NEEDED libcudart.so.12). */
#include "fake_api.h"

int torchlike_runtime(void)
{
    int v = 0;
    return cudaRuntimeGetVersion(&v) == cudaSuccess ? v : -1;
}
