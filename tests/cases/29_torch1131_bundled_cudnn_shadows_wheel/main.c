/* torch 1.13.1 whose wheel copies cuDNN 8.7 into torch/lib while the
 * nvidia-cudnn-cu11 dependency stays installed (upgraded by the user to
 * 8.8.1): the upgrade has no effect, torch/lib's copy is found first.
 *
 * Source:
 *   https://github.com/pytorch/pytorch/issues/96595
 *
 * No error: torch.backends.cudnn.version() says 8700 and the program exits 0.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *t = dlopen(case_path("../lib/python3.10/site-packages/torch/lib/libtorch_cuda.so"),
                     RTLD_NOW | RTLD_LOCAL);
    if (!t) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    size_t (*version)(void) = (size_t(*)(void))case_sym(t, "torch_cudnn_version");
    printf("%zu\n", version());
    return 0;
}
