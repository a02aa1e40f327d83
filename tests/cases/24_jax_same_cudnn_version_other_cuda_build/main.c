/* jax[cuda11_pip]==0.4.13 (pip cuDNN 8.9.4 for CUDA 11.8) on driver 510.47.03
 * (CUDA 11.6), with the same cuDNN version built for CUDA 12.2 in a directory
 * on LD_LIBRARY_PATH: "JAX does not load bundled CUDNN".
 *
 * Source:
 *   https://github.com/jax-ml/jax/issues/17553
 *
 * LD_LIBRARY_PATH beats xla_extension.so's RUNPATH; the CUDA 12.2 build's
 * cudnnCreate fails on a CUDA 11.6 driver; XLA blames the driver. (The
 * report's repro empties LD_LIBRARY_PATH; the thread's resolution was not
 * retrievable. This case follows issue 9's reconstruction of it: a copy of
 * the same version, another CUDA build, through LD_LIBRARY_PATH.)
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *x = dlopen(case_path("../lib/python3.10/site-packages/jaxlib/xla_extension.so"),
                     RTLD_NOW | RTLD_LOCAL);
    if (!x) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    int (*create)(void) = (int (*)(void))case_sym(x, "xla_create_cudnn_handle");
    if (create() == 0)
        return 0;
    fprintf(stderr,
            "2023-09-11 18:02:05.062414: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:439] Could "
            "not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED\n"
            "  2023-09-11 18:02:05.062576: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:443] "
            "Memory usage: 7995392 bytes free, 11721572352 bytes total.\n"
            "  2023-09-11 18:02:05.062650: E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:453] "
            "Possibly insufficient driver version: 510.47.3\n"
            "  jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization "
            "failed. Look at the errors above for more details.\n");
    return 1;
}
