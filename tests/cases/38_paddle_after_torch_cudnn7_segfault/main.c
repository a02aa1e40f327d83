/* PaddleOCR with torch imported first: torch's bundled cuDNN 7.4 is resident
 * when Paddle dlopens "libcudnn.so.7", so Paddle gets it instead of the
 * system's 7.6 it was built for, and crashes.
 *
 * Sources:
 *   https://github.com/PaddlePaddle/PaddleOCR/issues/604
 *   https://github.com/PaddlePaddle/Paddle/issues/55808
 *
 * WenmuZhou: torch bundles its own cuDNN, Paddle uses the system's; loading
 * torch first changes the cuDNN in the process; load paddle before torch.
 * Paddle's signal handler prints its lines, then the process dies of SIGSEGV.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *t = dlopen(case_path("../lib/python3.7/site-packages/torch/_C.cpython-37m-x86_64-linux-gnu.so"),
                     RTLD_NOW | RTLD_GLOBAL);
    if (!t)
        return 98;
    size_t (*tv)(void) = (size_t(*)(void))case_sym(t, "torch_cudnn_version");
    if (tv() != 7402)
        return 97;
    void *p = dlopen(case_path("../lib/python3.7/site-packages/paddle/fluid/core_avx.so"), RTLD_NOW | RTLD_LOCAL);
    if (!p)
        return 96;
    long (*pv)(void) = (long (*)(void))case_sym(p, "paddle_cudnn_version");
    if (pv() / 100 == 76)
        return 0;
    fprintf(stderr,
            "W0824 20:32:07.544497 10761 init.cc:209] Warning: PaddlePaddle catches a failure signal, it "
            "may not work properly\n"
            "W0824 20:32:07.548569 10761 init.cc:217] *** SIGSEGV (@0x558a9e7d5c20) received by PID 10761 "
            "(TID 0x7ffbe32c8740) from PID 18446744072073600032; stack trace: ***\n");
    case_segfault();
    return 1;
}
