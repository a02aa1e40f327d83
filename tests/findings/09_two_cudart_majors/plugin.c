/* The CUDA 12 plugin of 09_two_cudart_majors: linked against
 * libcudart.so.12 (DT_NEEDED, DT_RUNPATH to its own runtime directory). */
#include "fake_api.h"

__attribute__((visibility("default"))) int plugin_runtime_version(void)
{
    int v = 0;
    return cudaRuntimeGetVersion(&v) == cudaSuccess ? v : -1;
}
