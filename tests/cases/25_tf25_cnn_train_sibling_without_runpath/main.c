/* TensorFlow 2.5 with NVIDIA's cuDNN 8.0.3 tarball layout (EasyBuild module,
 * $EBROOTCUDNN/lib64): only the dispatcher carries RUNPATH $ORIGIN, so a
 * sub-library's DT_NEEDED on a sibling is not searched in its own directory.
 *
 * Sources:
 *   https://github.com/ComputeCanada/software-stack/issues/88
 *   https://github.com/NixOS/nixpkgs/pull/113105
 *   https://github.com/spack/spack-packages/pull/3399
 *
 * TF asks the version (the dispatcher loads ops_infer), then the backward
 * convolution makes the dispatcher load libcudnn_cnn_train.so.8 (found through
 * the dispatcher's RUNPATH); cnn_train's DT_NEEDED libcudnn_ops_train.so.8 is
 * right beside it but cnn_train has no RUNPATH and ops_train is not loaded
 * yet. cuDNN 8 prints its two lines and aborts.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *tf = dlopen(case_path("../lib/python3.8/site-packages/tensorflow/python/_pywrap_tensorflow_internal.so"),
                      RTLD_NOW | RTLD_LOCAL);
    if (!tf) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    size_t (*version)(void) = (size_t(*)(void))case_sym(tf, "tf_cudnn_version");
    int (*backward)(void) = (int (*)(void))case_sym(tf, "tf_conv_backward");
    if (version() != 8003)
        return 97;
    return backward();
}
