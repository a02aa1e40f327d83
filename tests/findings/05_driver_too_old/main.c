/* 05_driver_too_old: the driver is older than the CUDA runtime needs
 * (finding CDT004).
 *
 * Real-world situation: a CUDA 13 build (cudart 13) on a machine whose
 * driver is R535 (CUDA 12.2): the runtime's first device call fails with
 * cudaErrorInsufficientDriver (35), which frameworks print as
 * "CUDA driver version is insufficient for CUDA runtime version"
 * (cudaGetErrorString(35)). CUDA 13.x needs a driver >= 580.
 * Sources (ids of data/sources.toml): minor-version compatibility ranges
 * [R9][R10] and the toolkits' drivers [R9] (data/cuda-drivers.toml);
 * cudaGetDeviceCount = 35 with no driver of the runtime's CUDA major [R7][E2].
 *
 * Built linked against libcudart.so.13 (DT_RPATH). Exits 1 when the runtime
 * refuses the driver, after printing cudart's message to stderr.
 */
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int rt = 0, drv = 0, n = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    printf("cudaRuntimeGetVersion=%d cudaDriverGetVersion=%d\n", rt, drv);
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("cudaGetDeviceCount=%d %d\n", (int)e, n);
    if (e == cudaErrorInsufficientDriver) {
        fprintf(stderr, "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n");
        return 1;
    }
    return e == cudaSuccess ? 0 : 1;
}
