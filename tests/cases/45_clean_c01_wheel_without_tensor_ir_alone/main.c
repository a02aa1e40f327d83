/* Control for C01 (clean): PyTorch 2.12.1+cu130 whose cuDNN wheel (nvidia-cudnn-cu13 9.20.0.48) has no
 * libcudnn_engines_tensor_ir.so.9, on a machine with the NVIDIA apt package
 * libcudnn9-cuda-12 9.23.2 (a CUDA 12 build) in /usr/lib/x86_64-linux-gnu.
 *
 * Sources:
 *   https://github.com/pytorch/pytorch/issues/188892
 *   https://github.com/pytorch/pytorch/issues/187824
 *   https://github.com/pytorch/pytorch/issues/185512
 *
 * libtorch_cuda.so finds libcudnn.so.9 through its DT_RPATH (played by this
 * program's); graph, on its first call, dlopens the engines by name with its
 * RUNPATH $ORIGIN: the wheel lacks tensor_ir, so the ld.so cache serves
 * /lib/x86_64-linux-gnu/libcudnn_engines_tensor_ir.so.9 (9.23.2). The first
 * convolution finalizes a descriptor, which fails with
 * CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH; PyTorch relays cudnn-frontend's
 * text (no space after "failed", as reported) and Python exits 1.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1)
        return 98;
    /* torch.backends.cudnn.version(): compiled against 9.20.0 */
    if (cudnnGetVersion() != 92000)
        return 97;
    cudnnHandle_t h;
    if (cudnnCreate(&h) != CUDNN_STATUS_SUCCESS)
        return 96;
    cudnnStatus_t st = cudnnBackendFinalize(NULL);
    if (st != CUDNN_STATUS_SUCCESS) {
        fprintf(stderr,
                "Traceback (most recent call last):\n"
                "  File \"bug.py\", line 6, in <module>\n"
                "    y = conv(x)\n"
                "RuntimeError: CUDNN_BACKEND_TENSOR_DESCRIPTOR cudnnFinalize failedptrDesc->finalize() "
                "cudnn_status: %s\n",
                cudnnGetErrorString(st));
        return 1;
    }
    cudnnDestroy(h);
    return 0;
}
