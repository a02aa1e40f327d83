/* 20_stub_libcuda: the CUDA toolkit's stub libcuda loaded instead of the
 * driver's (finding CDT011), and never counted as a second copy of the
 * driver (no CDT001).
 *
 * Real-world situation: an image that put `/usr/local/cuda/lib64/stubs` on
 * LD_LIBRARY_PATH to link against -lcuda at build time, often with a
 * `libcuda.so.1` symlink added there so that the link step's output ran, and
 * left it there: at run time the runtime's dlopen("libcuda.so.1") finds the
 * stub before the driver's copy, and every driver call returns 34
 * (CUDA_ERROR_STUB_LIBRARY; the runtime says cudaErrorStubLibrary).
 * Sources (ids of data/sources.toml): the stub library and error 34 [R8]
 * (data/cuda-errors.toml).
 *
 * Usage: main [DRIVER]: counts the devices through the CUDA runtime, then
 * dlopens DRIVER (the driver's real libcuda, by path) if given. Built linked
 * against libcudart.so.13 (DT_RPATH). Exits 1 when the device count fails.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "fake_api.h"

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int n = -1;
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("cudaGetDeviceCount=%d\n", (int)e);
    if (argc > 1) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        printf("driver %s\n", h ? "loaded" : "not loaded");
    }
    return e == cudaSuccess ? 0 : 1;
}
