/* Clean stack: a program built by nvcc with the CUDA runtime linked
 * statically (cudart_static, nvcc's default), using the pip cuDNN 9: no
 * libcudart file in the process, the runtime's dlopen("libcuda.so.1") and
 * cuGetProcAddress_v2 come from the program itself. Nothing may be reported
 * above info.
 *
 * Sources (the layout):
 *   https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html
 *   https://pypi.org/project/nvidia-cudnn-cu12/
 */
#define FAKE_STATIC_RUNTIME
#define FAKE_CUDART 12080
#define FAKE_CUDART_MAJOR 12
#include "cudart.c"

#include "framework.h"

int main(void)
{
    case_unbuffered();
    int n = 0, v = 0;
    if (cudaRuntimeGetVersion(&v) != cudaSuccess || v != 12080)
        return 98;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1)
        return 97;
    cudnnHandle_t h;
    if (cudnnGetVersion() != 91000 || cudnnCreate(&h) != CUDNN_STATUS_SUCCESS)
        return 1;
    return cudnnDestroy(h) == CUDNN_STATUS_SUCCESS ? 0 : 1;
}
