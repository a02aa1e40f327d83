/* 10_cudnn_create_fails: cudnnCreate fails with NOT_INITIALIZED (finding
 * CDT007, decoded with the numbering of the cuDNN major that returned it).
 *
 * Real-world situation: a job started with CUDA_VISIBLE_DEVICES="" (or in a
 * container without GPU access): cuInit returns 100 CUDA_ERROR_NO_DEVICE
 * and cudnnCreate returns CUDNN_STATUS_NOT_INITIALIZED, 1001 in cuDNN 9 and
 * 1 in cuDNN 8 (XLA then logs "Possibly insufficient driver version").
 * Sources (ids of data/sources.toml): hidden GPU: cuInit 100, cudnnCreate
 * 1001 [E10]; cudnnCreate without a GPU: v9 1001, v8 1 [E4]; status
 * numbering [R4][R5] (data/cudnn-status.toml).
 * The fake driver is built with build-stack.sh --init-result 100.
 *
 * Built linked against libcudnn.so.N (DT_RPATH). Exits 1 when cudnnCreate
 * fails.
 */
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    cudnnHandle_t h = NULL;
    cudnnStatus_t st = cudnnCreate(&h);
    printf("cudnnCreate=%d %s\n", (int)st, cudnnGetErrorString(st));
    if (st != CUDNN_STATUS_SUCCESS) {
        fprintf(stderr, "RuntimeError: cuDNN error: %s\n", cudnnGetErrorString(st));
        return 1;
    }
    cudnnDestroy(h);
    return 0;
}
