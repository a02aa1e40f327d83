/* A libtorch_cuda.so stand-in: links cuDNN (DT_NEEDED libcudnn.so.9) and
 * finds it through its DT_RPATH; loaded later by dlopen (Python import). */
#include "fake_api.h"

__attribute__((visibility("default"))) long torchlike_cudnn_version(void)
{
    return (long)cudnnGetVersion();
}

__attribute__((visibility("default"))) int torchlike_adv_check(void)
{
    return (int)cudnnAdvVersionCheck();
}
