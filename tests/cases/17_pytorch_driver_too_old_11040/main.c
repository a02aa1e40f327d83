/* PyTorch built for CUDA 12.1 (pip nvidia-cuda-runtime-cu12) on a machine
 * whose driver is 470.86 (CUDA 11.4).
 *
 * Sources:
 *   https://github.com/lllyasviel/Fooocus/issues/1313
 *   https://github.com/RVC-Boss/GPT-SoVITS/issues/83
 *   https://github.com/ultralytics/yolov5/issues/2389
 *
 * c10/cuda/CUDAFunctions.cpp: cudaGetDeviceCount returns
 * cudaErrorInsufficientDriver (35) and PyTorch reports cudaDriverGetVersion()
 * (1000*major + 10*minor: 11040 = CUDA 11.4).
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
            "RuntimeError: The NVIDIA driver on your system is too old (found version %d). Please update "
            "your GPU driver by downloading and installing a new version from the URL: "
            "http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to "
            "install a PyTorch version that has been compiled with your version of the CUDA driver.\n",
            dv);
    return 1;
}
