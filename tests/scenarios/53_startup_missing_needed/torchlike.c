/* A library linked against the CUDA runtime, as libtorch_cuda.so is. */
#include "fake_api.h"

int torchlike_runtime(void)
{
    int v = 0;
    return cudaRuntimeGetVersion(&v) == cudaSuccess ? v : -1;
}
