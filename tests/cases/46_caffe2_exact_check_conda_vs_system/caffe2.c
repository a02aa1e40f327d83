/* Stand-in for caffe2's libcaffe2_gpu.so (conda caffe2-cuda9.0-cudnn7,
 * built with cuDNN 7.1.2): linked against libcudnn.so.7 through its RUNPATH.
 * Sources: see main.c. */
#include "fake_api.h"

/* CheckCuDNNVersions() of early-2018 caffe2/core/common_cudnn.h: the
 * versions must be equal (version_match alone); 0 when it passes. */
__attribute__((visibility("default"))) int caffe2_check_cudnn(long *compiled, long *runtime)
{
    long c = 7102, r = (long)cudnnGetVersion();
    *compiled = c;
    *runtime = r;
    int version_match = c == r;
    return version_match ? 0 : 1;
}
