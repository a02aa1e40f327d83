/* Stand-in for the cuda-tile package's library (a CUDA 13 build): DT_NEEDED
 * libcudart.so.13 through RUNPATH $ORIGIN/../../nvidia/cu13/lib.
 * Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) int cuda_tile_init(void)
{
    int v = 0;
    return cudaRuntimeGetVersion(&v) == cudaSuccess ? 0 : 1;
}
