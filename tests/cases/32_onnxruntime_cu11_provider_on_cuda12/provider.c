/* Stand-in for onnxruntime/capi/libonnxruntime_providers_cuda.so of a CUDA 11
 * build (onnxruntime-gpu 1.17/1.18.0): DT_NEEDED libcublasLt.so.11, RUNPATH
 * $ORIGIN. Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) int GetProvider(void)
{
    return cublasLtGetVersion() > 0 ? 0 : 1;
}
