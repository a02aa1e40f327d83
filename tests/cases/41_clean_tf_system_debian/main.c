/* Clean stack: a TensorFlow-like program that dlopens the CUDA runtime and
 * cuDNN by SONAME from a system install: NVIDIA's apt packages
 * libcudnn9-cuda-12 (/usr/lib/x86_64-linux-gnu) and cuda-cudart-12-6
 * (/usr/local/cuda-12.6/targets/x86_64-linux/lib, in the ld.so cache through
 * its .conf file). Nothing may be reported above info.
 *
 * Sources (the layout):
 *   https://docs.nvidia.com/deeplearning/cudnn/installation/latest/linux.html
 *   https://www.tensorflow.org/install/pip
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
    int n = 0;
    cudnnHandle_t h;
    if (count(&n) != cudaSuccess || n < 1 || version() != 90501 || create(&h) != CUDNN_STATUS_SUCCESS)
        return 1;
    fprintf(stderr, "I0000 00:00:1730000000.000000 1234 cuda_dnn.cc:529] Loaded cuDNN version 90501\n");
    return 0;
}
