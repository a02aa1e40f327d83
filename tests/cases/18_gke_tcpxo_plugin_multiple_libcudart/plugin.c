/* Stand-in for GKE's TCPXO NCCL net plugin (libnccl-net.so, mounted from the
 * host): DT_NEEDED libcudart.so.12, found beside it through RUNPATH $ORIGIN.
 * Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) int ncclNetPlugin_init(void)
{
    int v = 0;
    return cudaRuntimeGetVersion(&v) == cudaSuccess ? 0 : 1;
}
