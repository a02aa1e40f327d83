/* A Rust program using the ort crate's CUDA execution provider on Fedora 43,
 * whose terra package cuda-cudnn 9.21.1 is built for CUDA 12 while the
 * system has only CUDA 13 (libcublasLt.so.13).
 *
 * Sources:
 *   https://github.com/terrapkg/packages/issues/11766
 *   https://github.com/k2-fsa/sherpa-onnx/issues/2810
 *   https://github.com/SYSTRAN/faster-whisper/issues/1402
 *
 * The provider dlopens libcudnn.so.9 (the ld.so cache serves /usr/lib64);
 * the first convolution makes cuDNN load cuBLASLt of its own CUDA major,
 * libcublasLt.so.12, which is nowhere: "Invalid handle. Cannot load symbol
 * cublasLtGetVersion", then abort.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    cudnnStatus_t (*create)(cudnnHandle_t *) =
        (cudnnStatus_t(*)(cudnnHandle_t *))case_sym(h, "cudnnCreate");
    cudnnStatus_t (*finalize)(cudnnBackendDescriptor_t) =
        (cudnnStatus_t(*)(cudnnBackendDescriptor_t))case_sym(h, "cudnnBackendFinalize");
    cudnnHandle_t handle;
    if (create(&handle) != CUDNN_STATUS_SUCCESS)
        return 97;
    return finalize(NULL) == CUDNN_STATUS_SUCCESS ? 0 : 1;
}
