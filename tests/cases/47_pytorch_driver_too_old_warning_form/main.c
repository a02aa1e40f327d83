/* PyTorch built for CUDA 12.1 (pip nvidia-cuda-runtime-cu12) in a container
 * on a host driver of CUDA 11.0: the warning form, the program goes on.
 *
 * Sources:
 *   https://github.com/IEIT-Yuan/Yuan-2.0/issues/65
 *   https://github.com/pytorch/pytorch/blob/main/c10/cuda/CUDAFunctions.cpp
 *
 * c10/cuda/CUDAFunctions.cpp: cudaGetDeviceCount returns
 * cudaErrorInsufficientDriver (35); torch.cuda.is_available() turns the
 * error into a UserWarning with cudaDriverGetVersion() (1000*major +
 * 10*minor: 11000 = CUDA 11.0) and returns False.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess)
        return 0;
    int dv = 0;
    cudaDriverGetVersion(&dv);
    if (e != cudaErrorInsufficientDriver)
        return 98;
    fprintf(stderr,
            "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:124: UserWarning: CUDA "
            "initialization: The NVIDIA driver on your system is too old (found version %d). Please "
            "update your GPU driver by downloading and installing a new version from the URL: "
            "http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to "
            "install a PyTorch version that has been compiled with your version of the CUDA driver. "
            "(Triggered internally at /opt/pytorch/pytorch/c10/cuda/CUDAFunctions.cpp:108.)\n"
            "  return torch._C._cuda_getDeviceCount() > 0\n",
            dv);
    printf("cuda available: False\n");
    return 0;
}
