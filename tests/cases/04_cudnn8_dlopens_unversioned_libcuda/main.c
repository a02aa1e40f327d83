/* PyTorch with the pip cuDNN 8.9.2 in a container whose driver libraries are
 * libcuda.so.1 and libcuda.so.535.54.03 only: cuDNN 8's cnn_infer dlopens the
 * unversioned name "libcuda.so", which only a development package provides.
 *
 * Sources:
 *   https://github.com/sjtuplayer/anomalydiffusion/issues/76
 *   https://github.com/TinyLLaVA/TinyLLaVA_Factory/issues/134
 *   https://github.com/AICONSlab/3DINO/issues/2
 *   https://github.com/aws/aws-ofi-nccl/issues/244
 *
 * The first convolution makes the dispatcher open libcudnn_cnn_infer.so.8;
 * its constructor's dlopen("libcuda.so") fails, the dispatcher reads
 * dlerror() and aborts with cuDNN 8's two lines ("Aborted" is the shell's).
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1)
        return 98;
    if (cudnnGetVersion() != 8902)
        return 97;
    cudnnHandle_t h;
    if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS)
        return 96;
    /* conv2d: the dispatcher loads cnn_infer (and aborts here). */
    cudnnCnnInferVersionCheck();
    return 0;
}
