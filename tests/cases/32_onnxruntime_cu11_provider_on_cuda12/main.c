/* onnxruntime-gpu built for CUDA 11 in an environment with only CUDA 12
 * libraries (pip nvidia-cublas-cu12).
 *
 * Sources:
 *   https://github.com/PaddlePaddle/PaddleNLP/issues/8195
 *   https://github.com/microsoft/onnxruntime/issues/21684
 *   https://github.com/Gourieff/sd-webui-reactor/issues/503
 *
 * InferenceSession(..., providers=["CUDAExecutionProvider"]): ORT dlopens its
 * CUDA provider, whose DT_NEEDED libcublasLt.so.11 is nowhere; ORT logs two
 * lines (this release's text lacks a space: "#requirementsto") and runs on
 * the CPU (exit 0).
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    const char *p = case_path("../lib/python3.10/site-packages/onnxruntime/capi/libonnxruntime_providers_cuda.so");
    void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
    if (h)
        return 0;
    fprintf(stderr,
            "2024-03-27 06:33:23.219728338 [E:onnxruntime:Default, provider_bridge_ort.cc:1548 "
            "TryGetProviderInfo_CUDA] /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1209 "
            "onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : "
            "Failed to load library libonnxruntime_providers_cuda.so with error: %s\n\n"
            "2024-03-27 06:33:23.219759101 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:861 "
            "CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Please reference "
            "https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirementsto "
            "ensure all dependencies are met.\n",
            dlerror());
    return 0;
}
