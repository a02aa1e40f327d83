/* Stand-in for torch 1.0.1's _C library: DT_NEEDED libcudnn.so.7 (7.4.2,
 * bundled in torch/lib) through DT_RPATH $ORIGIN/lib. Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) size_t torch_cudnn_version(void)
{
    return cudnnGetVersion();
}
