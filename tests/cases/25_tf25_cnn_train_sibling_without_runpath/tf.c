/* Stand-in for TensorFlow 2.5's _pywrap_tensorflow_internal.so built from
 * source on Compute Canada: DT_NEEDED libcudnn.so.8 through DT_RUNPATH
 * $EBROOTCUDNN/lib64. Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) size_t tf_cudnn_version(void)
{
    return cudnnGetVersion();
}

/* Autotuning a convolution's backward pass: the dispatcher opens cnn_train. */
__attribute__((visibility("default"))) int tf_conv_backward(void)
{
    return (int)cudnnCnnTrainVersionCheck();
}
