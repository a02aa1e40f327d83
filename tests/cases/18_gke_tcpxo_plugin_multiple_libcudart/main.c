/* A MaxText/TransformerEngine workload in a CUDA 13 container on GKE whose
 * TCPXO NCCL net plugin (a CUDA 12 build, mounted from the host) brings its
 * own libcudart.so.12 into the process.
 *
 * Sources:
 *   https://github.com/NVIDIA/cudnn-frontend/issues/267
 *   https://github.com/NVIDIA/cudnn-frontend/pull/270
 *   https://github.com/nv-tlabs/Cosmos-Drive-Dreams/issues/40
 *
 * The program links the CUDA 13 runtime (pip nvidia/cu13/lib); NCCL dlopens
 * the plugin by path (NCCL_NET_PLUGIN); then cudnn-frontend's probe finds
 * both runtimes resident and throws; Python prints the RuntimeError, exit 1.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    int v = 0;
    if (cudaRuntimeGetVersion(&v) != cudaSuccess || v / 1000 != 13)
        return 98;
    void *net = dlopen("/usr/local/tcpxo/lib64/libnccl-net.so", RTLD_NOW | RTLD_LOCAL);
    if (!net) {
        fprintf(stderr, "%s\n", dlerror());
        return 97;
    }
    int (*init)(void) = (int (*)(void))case_sym(net, "ncclNetPlugin_init");
    if (init() != 0)
        return 96;
    void *fe = dlopen(case_path("../lib/python3.12/site-packages/cudnn/_compiled_module.cpython-312-x86_64-linux-gnu.so"),
                      RTLD_NOW | RTLD_LOCAL);
    if (!fe) {
        fprintf(stderr, "%s\n", dlerror());
        return 95;
    }
    int (*load)(char *, size_t) = (int (*)(char *, size_t))case_sym(fe, "cudnn_frontend_load_cudart");
    char msg[256];
    if (load(msg, sizeof msg) == 0)
        return 0;
    fprintf(stderr, "RuntimeError: %s\n", msg);
    return 1;
}
