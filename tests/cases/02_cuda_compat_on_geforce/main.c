/* Conda PyTorch (CUDA 11.3) in nvidia/cuda:11.3.1-cudnn8-devel-ubuntu20.04 on
 * a GeForce GTX 1650 with host driver 460.80: the image's forward-compatibility
 * libcuda (package cuda-compat-11-3, /usr/local/cuda-11.3/compat) is loaded
 * instead of the driver, and cuInit fails with 804.
 *
 * Sources:
 *   https://github.com/NVIDIA/nvidia-docker/issues/1515
 *   https://github.com/DeepVAC/TorchPod/issues/43
 *
 * torch.cuda.is_available(): cudaGetDeviceCount fails; PyTorch warns with the
 * runtime's error and prints False. (The fake runtime reports every cuInit
 * failure as 3, so the program asks libcuda for the code, as the runtime
 * would have relayed it.) Exit 0.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    int n = 0;
    if (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) {
        printf("True\n");
        return 0;
    }
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    CUresult (*init)(unsigned) = drv ? (CUresult(*)(unsigned))case_sym(drv, "cuInit") : NULL;
    int code = init ? init(0) : 35;
    if (code == 804)
        fprintf(stderr,
                "/opt/conda/lib/python3.8/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA "
                "initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
                "functions before calling NumCudaDevices() that might have already set an error? Error "
                "804: forward compatibility was attempted on non supported HW (Triggered internally at  "
                "/opt/conda/conda-bld/pytorch_1623448278899/work/c10/cuda/CUDAFunctions.cpp:115.)\n"
                "  return torch._C._cuda_getDeviceCount() > 0\n");
    printf("False\n");
    return 0;
}
