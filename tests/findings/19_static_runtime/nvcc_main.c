/* 19_static_runtime: a program built the way nvcc links by default, with
 * the CUDA runtime inside the executable (cudart_static; here the fake
 * runtime's source compiled in with -DFAKE_STATIC_RUNTIME). Exits 0. */
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    int n = -1;
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("status %d, %d device(s)\n", (int)e, n);
    return 0;
}
