/* 06_forward_compat: a forward-compatibility libcuda from a cuda-compat
 * directory (finding CDT005: info when it works, error with 803 or 804).
 *
 * Real-world situation: the nvidia/cuda:13.0.2 image ships cuda-compat-13-0
 * (/usr/local/cuda-13.0/compat/libcuda.so.580.95.05) and a user puts that
 * directory first on LD_LIBRARY_PATH. On a GPU outside forward
 * compatibility's scope cuInit fails with 804 ("forward compatibility was
 * attempted on non supported HW"); on a host whose kernel module is another
 * (newer) 580 driver it fails with 803 ("system has unsupported display
 * driver / cuda driver combination").
 * Sources (ids of data/sources.toml): forward compatibility [R11][R12],
 * the CUresult values [R8]; the image's compat 580.95.05 on kernel module
 * 580.159.04 gives cuInit = 803 [E10].
 *
 * Built linked against libcudart.so.13 (DT_RPATH). The fake runtime maps
 * every cuInit failure to 3, so the program asks libcuda itself (as a
 * framework's driver API path would) to print the real text. Exits 1 on an
 * error.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("cudaGetDeviceCount=%d %d\n", (int)e, n);
    if (e == cudaSuccess)
        return 0;
    void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    CUresult (*init)(unsigned) = drv ? (CUresult(*)(unsigned))dlsym(drv, "cuInit") : NULL;
    int r = init ? init(0) : -1;
    printf("cuInit=%d\n", r);
    if (r == 804)
        fprintf(stderr, "RuntimeError: CUDA error: forward compatibility was attempted on non supported HW\n");
    else if (r == 803)
        fprintf(stderr, "RuntimeError: CUDA error: system has unsupported display driver / cuda driver combination\n");
    return 1;
}
