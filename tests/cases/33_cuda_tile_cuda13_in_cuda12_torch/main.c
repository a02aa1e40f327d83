/* SGLang with torch for CUDA 12 and the cuda-tile package (a CUDA 13 build)
 * in one image: FlashInfer's autotuner probes the cuDNN FP8 GEMM tactic and
 * cudnn-frontend's libcudart scan fails on every attempt (not cached).
 *
 * Sources:
 *   https://github.com/sgl-project/sglang/pull/29072
 *   https://github.com/NVIDIA/cudnn-frontend/issues/267
 *
 * The program links the CUDA 12 runtime (pip nvidia/cuda_runtime/lib);
 * importing cuda_tile brings libcudart.so.13; three tactic enumerations each
 * get the frontend's exception, which SGLang's fix logs and skips (exit 0).
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    int v = 0;
    if (cudaRuntimeGetVersion(&v) != cudaSuccess || v / 1000 != 12)
        return 98;
    void *tile = dlopen(case_path("../lib/python3.12/site-packages/cuda_tile/lib/libcuda_tile.so"),
                        RTLD_NOW | RTLD_LOCAL);
    if (!tile) {
        fprintf(stderr, "%s\n", dlerror());
        return 97;
    }
    int (*init)(void) = (int (*)(void))case_sym(tile, "cuda_tile_init");
    if (init() != 0)
        return 96;
    void *fe = dlopen(case_path("../lib/python3.12/site-packages/cudnn/_compiled_module.cpython-312-x86_64-linux-gnu.so"),
                      RTLD_NOW | RTLD_LOCAL);
    if (!fe)
        return 95;
    int (*load)(char *, size_t) = (int (*)(char *, size_t))case_sym(fe, "cudnn_frontend_load_cudart");
    for (int tactic = 0; tactic < 3; tactic++) {
        char msg[256];
        if (load(msg, sizeof msg) != 0)
            fprintf(stderr, "RuntimeError: %s\n", msg);
    }
    return 0;
}
