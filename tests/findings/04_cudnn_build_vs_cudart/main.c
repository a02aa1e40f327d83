/* 04_cudnn_build_vs_cudart: cuDNN built for another CUDA major than the
 * runtime the process loaded (finding CDT003).
 *
 * Real-world situation: a CUDA 13 PyTorch-like program (cudart 13 from
 * site-packages/nvidia/cu13/lib) whose venv got the nvidia-cudnn-cu12 wheel
 * instead of nvidia-cudnn-cu13; both install the same file names under
 * site-packages/nvidia/cudnn/lib, and only cudnnGetCudartVersion() (12090)
 * tells them apart. The cuDNN 8 twin: a cuDNN 8.9.7 "for CUDA 11.x" with a
 * CUDA 12 runtime.
 * Sources (ids of data/sources.toml): cuDNN links cudart statically and
 * cudnnGetCudartVersion names its CUDA build [R4][R14][E3][E8]; the cu12
 * and cu13 wheels install under one path [E7][E8]; the CUDA builds of each
 * cuDNN release (data/cudnn-support.toml, from NVIDIA's support matrices).
 *
 * Built linked against libcudart.so.N and libcudnn.so.N (DT_RPATH). Exits 0.
 */
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int rt = 0;
    cudaError_t e = cudaRuntimeGetVersion(&rt);
    printf("cudaRuntimeGetVersion=%d %d\n", (int)e, rt);
    printf("cudnnGetVersion=%zu\n", cudnnGetVersion());
    printf("cudnnGetCudartVersion=%zu\n", cudnnGetCudartVersion());
    return 0;
}
