/* train: a stand-in for a PyTorch training script, built against the fake
 * cuDNN 9.19.0 of tests/fixtures (run.sh builds it).
 *
 * It is linked the way libtorch_cuda.so is: DT_NEEDED libcudnn.so.9 and
 * libcudart.so.13, found through a DT_RPATH into the pip wheel directories
 * (CUDA_RPATHS and --force-rpath in PyTorch's .ci/manywheel/build_cuda.sh,
 * https://github.com/pytorch/pytorch/blob/799d09f215740cc4fb78e0bd278dce469e33ddcb/.ci/manywheel/build_cuda.sh). Then it does what `torch.backends.cudnn.version()` and
 * a first convolution do:
 *   1. cudaGetDeviceCount (torch.cuda initialisation),
 *   2. the version check of torch/backends/cudnn/__init__.py, _init():
 *      runtime version from cudnnGetProperty, compile-time version from the
 *      headers (here -DCOMPILED_CUDNN=91900); majors must match and the
 *      runtime minor must be >= the compiled one,
 *   3. cudnnCreate, then prints "conv ok cudnn <cudnnGetVersion()>".
 *
 * Exit status: 0 ok, 1 cuDNN version incompatibility (PyTorch's
 * RuntimeError), 2 no CUDA device, 3 cudnnCreate failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_api.h"

#ifndef COMPILED_CUDNN
#error "build with -DCOMPILED_CUDNN=<CUDNN_VERSION of the headers>, e.g. 91900"
#endif
/* CUDNN_MAJOR / CUDNN_MINOR / CUDNN_PATCHLEVEL of a v9 header ([R1] in
 * data/sources.toml). */
#define COMPILED_MAJOR (COMPILED_CUDNN / 10000)
#define COMPILED_MINOR (COMPILED_CUDNN / 100 % 100)
#define COMPILED_PATCH (COMPILED_CUDNN % 100)

/* The rule of torch/backends/cudnn/__init__.py ([R24]). */
static int compatible(int major, int minor)
{
    const char *skip = getenv("PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK");
    if (skip && strcmp(skip, "1") == 0)
        return 1;
    if (major != COMPILED_MAJOR)
        return 0;
    if (major < 7) /* before cuDNN 7 minors had to match exactly */
        return minor == COMPILED_MINOR;
    return minor >= COMPILED_MINOR;
}

int main(void)
{
    int devices = 0;
    cudaError_t ce = cudaGetDeviceCount(&devices);
    if (ce != cudaSuccess || devices == 0) {
        fprintf(stderr, "train: no CUDA device (cudaGetDeviceCount returned %d)\n", ce);
        return 2;
    }

    size_t version = cudnnGetVersion();
    int major = -1, minor = -1, patch = -1;
    cudnnGetProperty(MAJOR_VERSION, &major);
    cudnnGetProperty(MINOR_VERSION, &minor);
    cudnnGetProperty(PATCH_LEVEL, &patch);
    if (!compatible(major, minor)) {
        /* PyTorch's text, double space in "compiled  against" included
         * (torch/backends/cudnn/__init__.py [R24]). PyTorch picks the last
         * sentence by what LD_LIBRARY_PATH contains; this keeps the one for
         * a path without "cuda" or "cudnn" in it, so the output does not
         * depend on the clone path. */
        fprintf(stderr,
                "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  "
                "against (%d, %d, %d) but found runtime version (%d, %d, %d). "
                "PyTorch already comes bundled with cuDNN. One option to resolving "
                "this error is to ensure PyTorch can find the bundled cuDNN. one "
                "possibility is that there is a conflicting cuDNN in LD_LIBRARY_PATH.\n",
                COMPILED_MAJOR, COMPILED_MINOR, COMPILED_PATCH, major, minor, patch);
        return 1;
    }

    cudnnHandle_t handle;
    cudnnStatus_t st = cudnnCreate(&handle);
    if (st != CUDNN_STATUS_SUCCESS) {
        fprintf(stderr, "RuntimeError: cuDNN error: %s\n", cudnnGetErrorString(st));
        return 3;
    }
    printf("conv ok cudnn %zu\n", version);
    cudnnDestroy(handle);
    return 0;
}
