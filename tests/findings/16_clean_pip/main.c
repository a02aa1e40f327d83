/* 16_clean_pip: a healthy pip-layout process: no error or warning finding
 * (the negative case every rule must keep quiet on).
 *
 * Real-world situation: PyTorch 2.11+cu130 on the project's GPU machine:
 * libcudnn.so.9 and libcudart.so.13 through libtorch_cuda.so's DT_RPATH
 * (site-packages/nvidia/cudnn/lib 9.19.0 for CUDA 13.0,
 * site-packages/nvidia/cu13/lib), the driver's libcuda 580.159.04 (CUDA 13.0)
 * from /usr/local/nvidia/lib64 on LD_LIBRARY_PATH, an SM 9.0 GPU. The
 * dispatcher, graph, the engines, ops/cnn/adv all from one directory.
 * It prints XLA's "Loaded cuDNN version" line to stderr, as XLA does when
 * all is well.
 * Sources (ids of data/sources.toml): the machine [E10][E11][E-probe];
 * driver 580 runs CUDA 13.x [R9][R10] (data/cuda-drivers.toml); 9.19 for
 * CUDA 13 supports SM 7.5+ [R15n] (data/cudnn-support.toml); the
 * sub-library checks [R4]; XLA's log lines [R21].
 *
 * Built linked against libcudart.so.13 and libcudnn.so.9 (DT_RPATH). Exits 0.
 */
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int rt = 0, drv = 0, major = -1, minor = -1;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
    printf("runtime=%d driver=%d sm=%d.%d\n", rt, drv, major, minor);
    size_t v = cudnnGetVersion();
    printf("cudnnGetVersion=%zu cudart=%zu\n", v, cudnnGetCudartVersion());
    /* XLA's line on success, close to its mismatch message but not it
     * (XLA's cuda_dnn.cc [R21]): no finding may come of it. */
    fprintf(stderr, "I0000 00:00:00.000000    1234 cuda_dnn.cc:529] Loaded cuDNN version %zu\n", v);
    printf("checks=%d %d %d %d\n", (int)cudnnGraphVersionCheck(), (int)cudnnOpsVersionCheck(),
           (int)cudnnCnnVersionCheck(), (int)cudnnAdvVersionCheck());
    cudnnHandle_t h = NULL;
    cudnnStatus_t st = cudnnCreate(&h);
    printf("cudnnCreate=%d\n", (int)st);
    if (st != CUDNN_STATUS_SUCCESS)
        return 1;
    cudnnDestroy(h);
    return 0;
}
