/* Stand-in for torch/_C.cpython-36m-x86_64-linux-gnu.so of PyTorch 0.4:
 * linked against libcudnn.so.7 (conda's cudnn 7.1.2, through its RUNPATH).
 * Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) int torch_cudnn_compiled_version(void)
{
    return 7102; /* CUDNN_VERSION of the build */
}

/* Keeps the DT_NEEDED honest: _C uses cuDNN. */
__attribute__((visibility("default"))) size_t torch_cudnn_runtime_version(void)
{
    return cudnnGetVersion();
}
