/* Clean stack: cuDNN 9.8 from NVIDIA's tarball unpacked into the CUDA 12.8
 * toolkit directory, which is on LD_LIBRARY_PATH (the installation guide's
 * tarball method), with the toolkit's runtime; a program that dlopens both by
 * SONAME. Nothing may be reported above info.
 *
 * Sources (the layout):
 *   https://docs.nvidia.com/deeplearning/cudnn/installation/latest/linux.html
 *   https://docs.nvidia.com/cuda/cuda-installation-guide-linux/
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *rt = dlopen("libcudart.so.12", RTLD_NOW | RTLD_LOCAL);
    void *dnn = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!rt || !dnn)
        return 98;
    cudaError_t (*count)(int *) = (cudaError_t(*)(int *))case_sym(rt, "cudaGetDeviceCount");
    size_t (*version)(void) = (size_t(*)(void))case_sym(dnn, "cudnnGetVersion");
    cudnnStatus_t (*create)(cudnnHandle_t *) = (cudnnStatus_t(*)(cudnnHandle_t *))case_sym(dnn, "cudnnCreate");
    cudnnStatus_t (*ops)(void) = (cudnnStatus_t(*)(void))case_sym(dnn, "cudnnOpsVersionCheck");
    int n = 0;
    cudnnHandle_t h;
    if (count(&n) != cudaSuccess || n < 1 || version() != 90800 || create(&h) != CUDNN_STATUS_SUCCESS ||
        ops() != CUDNN_STATUS_SUCCESS)
        return 1;
    return 0;
}
