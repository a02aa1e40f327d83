/* 19_static_runtime: objects that carry a CUDA runtime linked into them
 * (issue 14): no libcudart file enters the process, yet a runtime is there.
 *
 * Real-world situation: CuPy. `cupy_backends/cuda/api/runtime.*.so` links
 * the CUDA runtime statically (the cupy-cuda13x wheel: CUDA 13.x; on the
 * GPU machine it fetched the driver's entry points with cuGetProcAddress
 * while PyTorch's came from libcudart.so.13). NVIDIA's own libraries
 * (cuBLASLt, cuDNN) do the same: no news. With a CUDA 12.2 driver, a
 * CUDA 13 runtime cannot work, static or not (CDT004).
 * Sources (ids of data/sources.toml): cuDNN links cudart statically
 * [R14]; driver minimums (data/cuda-drivers.toml); a static runtime
 * reaches the driver through cuGetProcAddress
 * (https://github.com/NVlabs/NVBit/issues/134; CUDA Driver API, "Driver
 * Entry Point Access").
 *
 * Usage: main MODULE... dlopens each module by path and counts the devices
 * through it (app_device_count). Exits 0.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    for (int i = 1; i < argc; i++) {
        void *m = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        int (*count)(void) = m ? (int (*)(void))dlsym(m, "app_device_count") : NULL;
        printf("%d device(s)\n", count ? count() : -999);
    }
    return 0;
}
