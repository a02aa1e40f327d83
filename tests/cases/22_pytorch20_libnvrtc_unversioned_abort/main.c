/* torch 2.0.0+cu118 (pip cuDNN 8.7.0): cuDNN 8.7's cnn_infer dlopens the
 * unversioned "libnvrtc.so", which no runtime package ships; the dispatcher
 * reads the pending dlerror() after its successful dlopen and aborts.
 *
 * Sources:
 *   https://github.com/pytorch/pytorch/issues/97041
 *   https://github.com/pytorch/pytorch/pull/98644
 *   https://github.com/facefusion/facefusion-docker/issues/9
 *
 * The first convolution makes the dispatcher open libcudnn_cnn_infer.so.8
 * (found); its constructor's dlopen("libnvrtc.so") fails while the wheel
 * nvidia-cuda-nvrtc-cu11 has libnvrtc.so.11.2 only. Fixed in torch 2.0.1 by
 * preloading cnn_infer and consuming dlerror (pytorch#98644).
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *t = dlopen(case_path("../lib/python3.10/site-packages/torch/lib/libtorch_cuda.so"),
                     RTLD_NOW | RTLD_LOCAL);
    if (!t) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    size_t (*version)(void) = (size_t(*)(void))case_sym(t, "torch_cudnn_version");
    int (*conv)(void) = (int (*)(void))case_sym(t, "torch_conv");
    if (version() != 8700)
        return 97;
    return conv();
}
