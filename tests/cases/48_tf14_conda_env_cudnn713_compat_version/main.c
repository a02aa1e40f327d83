/* conda tensorflow-gpu 1.4.1, built with cuDNN 7.0.5, in an env where conda
 * installed its cudnn 7.1.3 package.
 *
 * Source:
 *   https://github.com/qianguih/voxelnet/issues/50
 *
 * TF 1.x's cuda_dnn.cc compares the "compatibility version" (v / 100 * 100)
 * of the loaded cuDNN with its build's and logs the mismatch; the next
 * convolution's CHECK then aborts ("Check failed:
 * stream->parent()->GetConvolveAlgorithms(...)"). The reporter's fix:
 * `conda install cudnn=7.0.5`.
 */
#include <stdlib.h>

#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *t = dlopen(case_path("../lib/python3.6/site-packages/tensorflow/python/_pywrap_tensorflow_internal.so"),
                     RTLD_NOW | RTLD_LOCAL);
    if (!t) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    long (*version)(void) = (long (*)(void))case_sym(t, "tf_cudnn_version");
    long v = version(), b = 7005;
    if (v < 0)
        return 97;
    if (v / 100 == b / 100)
        return 0;
    fprintf(stderr,
            "2019-01-18 21:14:06.030010: E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded "
            "runtime CuDNN library: %ld (compatibility version %ld) but source was compiled with %ld "
            "(compatibility version %ld).  If using a binary install, upgrade your CuDNN library to "
            "match.  If building from sources, make sure the library loaded at runtime matches a "
            "compatible version specified during compile configuration.\n"
            "2019-01-18 21:14:06.030486: F tensorflow/core/kernels/conv_ops_3d.cc:395] Check failed: "
            "stream->parent()->GetConvolveAlgorithms( conv_parameters.ShouldIncludeWinogradNonfusedAlgo<T>(), "
            "&algorithms)\n",
            v, v / 100 * 100, b, b / 100 * 100);
    abort();
}
