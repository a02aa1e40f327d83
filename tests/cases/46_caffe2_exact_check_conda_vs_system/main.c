/* Early-2018 Caffe2 (conda caffe2-cuda9.0-cudnn7, built with cuDNN 7.1.2)
 * with the system's cuDNN 7.0.4 in /usr/local/cuda/lib64 first on
 * LD_LIBRARY_PATH.
 *
 * Sources:
 *   https://github.com/ContinuumIO/anaconda-issues/issues/9174
 *   https://github.com/facebookresearch/Detectron/issues/139
 *   https://github.com/pytorch/pytorch/blob/1f47e7a9b618bf756f4481c07d62f17e3cdb0d8e/caffe2/core/common_cudnn.h
 *
 * CheckCuDNNVersions() of that time enforced "version_match" alone: the
 * versions must be equal, and the enforce names the failed condition.
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
            "[enforce fail at common_cudnn.h:102] version_match. cuDNN compiled (%ld) and runtime "
            "(%ld) versions mismatch\n",
            c, r);
    return 1;
}
