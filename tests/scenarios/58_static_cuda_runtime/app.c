/* A Python extension module that carries the CUDA runtime inside it, as
 * CuPy's cupy_backends/cuda/api/runtime.*.so does (built with
 * -DFAKE_STATIC_RUNTIME, linked with the fake runtime's source): no
 * libcudart file ever enters the process, yet the runtime asks the driver
 * for its entry points with cuGetProcAddress_v2. */
#include "fake_api.h"

__attribute__((visibility("default"))) int app_device_count(void)
{
    int n = -1;
    cudaError_t e = cudaGetDeviceCount(&n);
    return e == cudaSuccess ? n : -(int)e;
}
