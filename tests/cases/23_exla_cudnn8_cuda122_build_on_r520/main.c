/* EXLA (XLA, built with cuDNN 8.9.4 for CUDA 11.8) on a machine whose apt
 * libcudnn8 is 8.9.4.25-1+cuda12.2, the same version built for CUDA 12.2,
 * with driver 520.61.05 (CUDA 11.8).
 *
 * Sources:
 *   https://github.com/elixir-nx/xla/issues/53
 *   https://github.com/jax-ml/jax/issues/19768
 *
 * XLA's dso_loader dlopens "libcudnn.so.8" (the ld.so cache serves the apt
 * copy); the versions agree (8.9.4), but cudnnCreate fails: a CUDA 12 build
 * needs a driver >= 525.60.13. XLA logs its three lines once per attempt
 * (twice here; the driver as it reads it from /proc, leading zeros dropped),
 * then fails the computation.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *h = dlopen("libcudnn.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 98;
    cudnnStatus_t (*create)(cudnnHandle_t *) =
        (cudnnStatus_t(*)(cudnnHandle_t *))case_sym(h, "cudnnCreate");
    const char *(*name)(cudnnStatus_t) =
        (const char *(*)(cudnnStatus_t))case_sym(h, "cudnnGetErrorString");
    const char *stamp[2] = {"2024-02-12 20:36:44.949913", "2024-02-12 20:36:44.950492"};
    for (int attempt = 0; attempt < 2; attempt++) {
        cudnnHandle_t handle;
        cudnnStatus_t st = create(&handle);
        if (st == CUDNN_STATUS_SUCCESS)
            return 0;
        fprintf(stderr,
                "%s: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:474] Could not create cudnn "
                "handle: %s\n"
                "%s: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:478] Memory usage: 42069065728 "
                "bytes free, 42505273344 bytes total.\n"
                "%s: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:488] Possibly insufficient "
                "driver version: 520.61.5\n",
                stamp[attempt], name(st), stamp[attempt], stamp[attempt]);
    }
    fprintf(stderr, "** (RuntimeError) FAILED_PRECONDITION: DNN library initialization failed. Look at "
                    "the errors above for more details.\n");
    return 1;
}
