/* 19_static_runtime: a module with the fake CUDA runtime linked in (built
 * with ../../fixtures/stack/cudart.c and -DFAKE_STATIC_RUNTIME): it
 * exports app_device_count and nothing of the runtime. */
#include "fake_api.h"

__attribute__((visibility("default"))) int app_device_count(void)
{
    int n = -1;
    cudaError_t e = cudaGetDeviceCount(&n);
    return e == cudaSuccess ? n : -(int)e;
}
