/* TensorFlow 1.x (built with cuDNN 7.0.4) on a machine whose apt package
 * libcudnn7 is 7.2.1: the old "compatibility version" check.
 *
 * Sources:
 *   https://github.com/endernewton/tf-faster-rcnn/issues/436
 *   https://github.com/LeoCHANGcn/Nvidia-docker-Ubuntu-16.04-Unity-Desktop-TensorFlow-with-GPU/issues/1
 *   https://github.com/balancap/SSD-Tensorflow/issues/340
 *
 * TF's dso_loader dlopens "libcudnn.so.7" (the ld.so cache serves the apt
 * copy); cuda_dnn.cc compares (v / 100) * 100 and logs the message; the
 * session then fails.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *h = dlopen("libcudnn.so.7", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 98;
    size_t (*version)(void) = (size_t(*)(void))case_sym(h, "cudnnGetVersion");
    long v = (long)version(), b = 7004;
    if (v / 100 == b / 100)
        return 0;
    fprintf(stderr,
            "E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: %ld "
            "(compatibility version %ld) but source was compiled with %ld (compatibility version %ld).  "
            "If using a binary install, upgrade your CuDNN library to match.  If building from sources, "
            "make sure the library loaded at runtime matches a compatible version specified during "
            "compile configuration.\n",
            v, v / 100 * 100, b, b / 100 * 100);
    return 1;
}
