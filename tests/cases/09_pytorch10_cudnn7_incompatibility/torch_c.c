/* Stand-in for torch/_C of PyTorch 1.0 (built with cuDNN 7.4.1), linked
 * against libcudnn.so.7. Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) int torch_cudnn_compiled_version(void)
{
    return 7401;
}

__attribute__((visibility("default"))) size_t torch_cudnn_runtime_version(void)
{
    return cudnnGetVersion();
}
