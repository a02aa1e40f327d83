/* TensorFlow 2.12 (pip) in a conda env whose own cuDNN 8.1 (conda package
 * cudnn 8.1.0.77 in $CONDA_PREFIX/lib) comes before the pip cuDNN 8.6
 * (nvidia-cudnn-cu11) on LD_LIBRARY_PATH, as TensorFlow's install guide had it.
 *
 * Sources:
 *   https://github.com/tensorflow/docs/pull/2251
 *   https://github.com/bmaltais/kohya_ss/issues/2787
 *
 * TensorFlow up to 2.14 found cuDNN only through LD_LIBRARY_PATH: its
 * dso_loader dlopens "libcudnn.so.8" by name, then XLA's cuda_dnn.cc compares
 * the version with the one it was built with and logs the message (wording of
 * kohya_ss#2787, numbers of the docs PR's environment); the op then fails.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *h = dlopen("libcudnn.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 98;
    cudnnStatus_t (*prop)(libraryPropertyType, int *) =
        (cudnnStatus_t(*)(libraryPropertyType, int *))case_sym(h, "cudnnGetProperty");
    int v[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++)
        prop((libraryPropertyType)i, &v[i]);
    if (v[0] == 8 && v[1] >= 6)
        return 0;
    fprintf(stderr,
            "E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:447] Loaded runtime CuDNN "
            "library: %d.%d.%d but source was compiled with: 8.6.0.  CuDNN library needs to have "
            "matching major version and equal or higher minor version. If using a binary install, "
            "upgrade your CuDNN library.  If building from sources, make sure the library loaded at "
            "runtime is compatible with the version specified during compile configuration.\n",
            v[0], v[1], v[2]);
    return 1;
}
