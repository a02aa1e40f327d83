/* The runtime reaches the driver only through cuGetProcAddress[_v2]
 * (https://github.com/NVlabs/NVBit/issues/134; CUDA Driver API, "Driver
 * Entry Point Access"): the driver's cuDriverGetVersion and cuInit
 * calls must still be seen, attributed to libcuda, the runtime's results
 * unchanged. */
#include <dlfcn.h>
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int v = -1;
    cudaError_t e = cudaRuntimeGetVersion(&v);
    printf("13: cudaRuntimeGetVersion() = %d, %d\n", (int)e, v);
    v = -1;
    e = cudaDriverGetVersion(&v);
    printf("13: cudaDriverGetVersion() = %d, %d\n", (int)e, v);
    int n = -1;
    e = cudaGetDeviceCount(&n);
    printf("13: cudaGetDeviceCount() = %d, %d\n", (int)e, n);
    int cc[2] = {-1, -1};
    cudaError_t e1 = cudaDeviceGetAttribute(&cc[0], cudaDevAttrComputeCapabilityMajor, 0);
    cudaError_t e2 = cudaDeviceGetAttribute(&cc[1], cudaDevAttrComputeCapabilityMinor, 0);
    printf("13: compute capability = %d.%d (%d, %d)\n", cc[0], cc[1], (int)e1, (int)e2);
    v = -1; /* another attribute: passes through, not recorded */
    e = cudaDeviceGetAttribute(&v, 1, 0);
    printf("13: cudaDeviceGetAttribute(1) = %d, %d\n", (int)e, v);
    e = cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, 3);
    printf("13: cudaDeviceGetAttribute(major, device 3) = %d\n", (int)e);

    void *rt11 = dlopen("rt11/libcudart.so.11.0", RTLD_NOW | RTLD_LOCAL);
    if (!rt11) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    cudaError_t (*drv)(int *) = (cudaError_t (*)(int *))dlsym(rt11, "cudaDriverGetVersion");
    cudaError_t (*rtv)(int *) = (cudaError_t (*)(int *))dlsym(rt11, "cudaRuntimeGetVersion");
    if (!drv || !rtv)
        return 1;
    v = -1;
    e = drv(&v);
    printf("11.8: cudaDriverGetVersion() = %d, %d\n", (int)e, v);
    v = -1;
    e = rtv(&v);
    printf("11.8: cudaRuntimeGetVersion() = %d, %d\n", (int)e, v);
    return 0;
}
