/* TensorFlow 1.15 (built with cuDNN 7.6.3) with a system cuDNN 7.5.0: the
 * intermediate cuda_dnn.cc wording, printed once per attempt (twice).
 *
 * Sources:
 *   https://github.com/tensorflow/tensorflow/issues/35376
 *   https://github.com/tensorflow/tensorflow/issues/37606
 *
 * dso_loader dlopens "libcudnn.so.7" (the apt copy through the ld.so cache),
 * then each cuDNN handle creation logs the check; the op fails.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *h = dlopen("libcudnn.so.7", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 98;
    fprintf(stderr, "2020-07-02 18:49:12.161725: I tensorflow/stream_executor/platform/default/"
                    "dso_loader.cc:44] Successfully opened dynamic library libcudnn.so.7\n");
    cudnnStatus_t (*prop)(libraryPropertyType, int *) =
        (cudnnStatus_t(*)(libraryPropertyType, int *))case_sym(h, "cudnnGetProperty");
    int v[3];
    for (int i = 0; i < 3; i++)
        prop((libraryPropertyType)i, &v[i]);
    if (v[0] == 7 && v[1] >= 6)
        return 0;
    const char *stamp[2] = {"2020-07-02 18:49:18.254447", "2020-07-02 18:49:18.262843"};
    for (int i = 0; i < 2; i++)
        fprintf(stderr,
                "%s: E tensorflow/stream_executor/cuda/cuda_dnn.cc:320] Loaded runtime CuDNN library: "
                "%d.%d.%d but source was compiled with: 7.6.3.  CuDNN library major and minor version "
                "needs to match or have higher minor version in case of CuDNN 7.0 or later version. If "
                "using a binary install, upgrade your CuDNN library.  If building from sources, make "
                "sure the library loaded at runtime is compatible with the version specified during "
                "compile configuration.\n",
                stamp[i], v[0], v[1], v[2]);
    return 1;
}
