/* PyTorch on aarch64 with the nvidia-cudnn-cu12 9.1 wheel whose
 * libcudnn_graph.so.9 has no RUNPATH: the engine libraries right beside it
 * are not found.
 *
 * Sources:
 *   https://github.com/pytorch/builder/pull/1859
 *   https://github.com/pytorch/builder/pull/1847
 *
 * import torch loads libtorch_cuda.so (DT_RUNPATH into the wheel); the
 * dispatcher finds graph through its own RUNPATH $ORIGIN; graph dlopens the
 * engines by name, but a dlopen from an object without RUNPATH never looks
 * in the caller's own directory. cuDNN prints its line, the convolution
 * fails with CUDNN_STATUS_NOT_INITIALIZED and Python exits 1.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *torch = dlopen(case_path("../lib/python3.10/site-packages/torch/lib/libtorch_cuda.so"),
                         RTLD_NOW | RTLD_LOCAL);
    if (!torch) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    int (*conv)(void) = (int (*)(void))case_sym(torch, "torch_conv");
    int st = conv();
    if (st == 0)
        return 0;
    fprintf(stderr,
            " File \"/test-arm/lib/python3.10/site-packages/torch/nn/modules/conv.py\", line 453, in _conv_forward\n"
            "    return F.conv2d(input, weight, bias, self.stride,\n"
            "RuntimeError: CUDNN_BACKEND_TENSOR_DESCRIPTOR cudnnFinalize failed cudnn_status: %s\n",
            st == 1001 ? "CUDNN_STATUS_NOT_INITIALIZED" : "CUDNN_STATUS_INTERNAL_ERROR");
    return 1;
}
