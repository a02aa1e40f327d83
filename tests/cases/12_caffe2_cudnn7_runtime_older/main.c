/* Caffe2 / Detectron (conda caffe2 built with cuDNN 7.1.2) with the system's
 * cuDNN 7.0.5 in /usr/local/cuda/lib64 first on LD_LIBRARY_PATH.
 *
 * Sources:
 *   https://github.com/facebookresearch/Detectron/issues/574
 *   https://github.com/ContinuumIO/anaconda-issues/issues/9174
 *   https://github.com/onnx/onnx-caffe2/issues/288
 *
 * CheckCuDNNVersions() enforces "version_match || backwards_compatible_7 ||
 * patch_compatible": an older runtime (7.0.5 < 7.1.2) fails.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *g = dlopen(case_path("../lib/python2.7/site-packages/caffe2/python/libcaffe2_gpu.so"),
                     RTLD_NOW | RTLD_LOCAL);
    if (!g) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    int (*check)(long *, long *) = (int (*)(long *, long *))case_sym(g, "caffe2_check_cudnn");
    long c, r;
    if (check(&c, &r) == 0)
        return 0;
    fprintf(stderr,
            "RuntimeError: [enforce fail at common_cudnn.h:108] version_match || backwards_compatible_7 "
            "|| patch_compatible. cuDNN compiled (%ld) and runtime (%ld) versions mismatch\n",
            c, r);
    return 1;
}
