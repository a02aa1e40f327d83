/* 11_gpu_too_old: a GPU older than the loaded cuDNN supports, the program
 * having asked for the device's compute capability (finding CDT009).
 *
 * Real-world situation: cuDNN 9.11 and later (and every "for CUDA 13.x"
 * build) start at SM 7.5, so a Volta (SM 7.0) GPU is refused; PyTorch checks
 * this itself and raises "cuDNN version 9xxxx is not compatible with devices
 * with SM < 7.5". cuDNN 8.9.x starts at SM 5.0, so a Kepler (SM 3.7) GPU is
 * outside its range.
 * Sources (ids of data/sources.toml): support matrices and architecture
 * drops [R15g][R15n][R24][R38][R39] (data/cudnn-support.toml); PyTorch's
 * SM check [R24].
 * The fake driver is built with build-stack.sh --cc M.m.
 *
 * Built linked against libcudart.so.N and libcudnn.so.N (DT_RPATH).
 * Exits 1 after PyTorch's message when it applies.
 */
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    size_t v = cudnnGetVersion();
    int major = -1, minor = -1;
    cudaError_t e1 = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaError_t e2 = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    printf("cudnnGetVersion=%zu sm=%d.%d (%d %d)\n", v, major, minor, (int)e1, (int)e2);
    if (v >= 91100 && major >= 0 && major * 10 + minor < 75) {
        fprintf(stderr, "RuntimeError: cuDNN version %zu is not compatible with devices with SM < 7.5. "
                        "Please install a version of PyTorch with a compatible cuDNN version. "
                        "https://github.com/pytorch/pytorch/blob/main/RELEASE.md#release-compatibility-matrix\n",
                v);
        return 1;
    }
    return 0;
}
