/* 08_nvrtc_missing: cuDNN's dlopen of NVRTC fails (finding CDT006).
 *
 * Real-world situation: cuDNN 9 (for CUDA 12) from pip; its libcudnn_graph
 * dlopens libnvrtc.so.12 (and then libnvrtc.so), which the nvidia-cuda-nvrtc
 * wheel installs in site-packages/nvidia/cuda_nvrtc/lib, a directory neither
 * LD_LIBRARY_PATH nor cuDNN's RUNPATH names: "libnvrtc.so: cannot open
 * shared object file". Runtime-compiled engines are then unavailable.
 * Sources (ids of data/sources.toml): graph dlopens libnvrtc.so.%d and
 * the wheels' RUNPATH names ../../nvrtc/lib or ../../cuda_nvrtc/lib
 * [E7][E8]; JAX notes one cuDNN release that pointed at the wrong one
 * [R27]; the NVIDIA wheels [R30].
 * The fake cuDNN is built with build-stack.sh --nvrtc.
 *
 * Built linked against libcudnn.so.9 (DT_RPATH). Exits 0.
 */
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("cudnnGetVersion=%zu\n", cudnnGetVersion());
    cudnnHandle_t h = NULL;
    cudnnStatus_t st = cudnnCreate(&h);
    printf("cudnnCreate=%d\n", (int)st);
    if (st == CUDNN_STATUS_SUCCESS)
        cudnnDestroy(h);
    return 0;
}
