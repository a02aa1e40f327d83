/* Stand-in for torch/lib/libtorch_cuda.so: DT_NEEDED libcudnn.so.9 found
 * through its DT_RUNPATH; a convolution finalizes a backend descriptor.
 * Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) int torch_conv(void)
{
    if (cudnnGetVersion() != 90100)
        return -1;
    return (int)cudnnBackendFinalize(0);
}
