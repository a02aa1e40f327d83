/* Stand-in for a Python extension module that links a cuDNN 9 dispatcher
 * vendored without RUNPATH (site-packages/vendorpkg.libs). Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) size_t ext_cudnn_version(void)
{
    return cudnnGetVersion();
}
