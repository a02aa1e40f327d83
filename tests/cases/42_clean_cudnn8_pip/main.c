/* Clean stack: PyTorch from pip with its cuDNN 8 and CUDA 12 runtime wheels,
 * the driver from the system. Nothing is wrong; nothing may be reported
 * above info.
 *
 * Sources (the layout):
 *   https://pypi.org/project/nvidia-cudnn-cu12/8.9.7.29/
 *   https://github.com/pytorch/pytorch/issues/104259
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *t = dlopen(case_path("../lib/python3.10/site-packages/torch/lib/libtorch_cuda.so"),
                     RTLD_NOW | RTLD_GLOBAL);
    if (!t) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    int (*smoke)(void) = (int (*)(void))case_sym(t, "torch_smoke");
    return smoke();
}
