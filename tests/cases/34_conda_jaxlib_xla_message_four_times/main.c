/* conda-forge jaxlib built with cuDNN 9.13.1 in an env whose cudnn package
 * is 9.10.1: XLA's version check, four times in 25 ms (once per attempt).
 *
 * Source:
 *   https://github.com/conda-forge/jaxlib-feedstock/issues/329
 *
 * Newer XLA logs with the absl prefix (E1027 …); the computation then fails.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *x = dlopen(case_path("../lib/python3.12/site-packages/jaxlib/xla_extension.so"),
                     RTLD_NOW | RTLD_LOCAL);
    if (!x) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    int (*version)(int *) = (int (*)(int *))case_sym(x, "xla_cudnn_version");
    int v[3];
    if (version(v) != 0)
        return 97;
    if (v[0] == 9 && v[1] >= 13)
        return 0;
    const char *stamp[4] = {"15:11:27.184481", "15:11:27.187087", "15:11:27.204921", "15:11:27.207794"};
    for (int i = 0; i < 4; i++)
        fprintf(stderr,
                "E1027 %s 3266602 cuda_dnn.cc:456] Loaded runtime CuDNN library: %d.%d.%d but source was "
                "compiled with: 9.13.1.  CuDNN library needs to have matching major version and equal or "
                "higher minor version. If using a binary install, upgrade your CuDNN library.  If "
                "building from sources, make sure the library loaded at runtime is compatible with the "
                "version specified during compile configuration.\n",
                stamp[i], v[0], v[1], v[2]);
    fprintf(stderr, "jax.errors.JaxRuntimeError: FAILED_PRECONDITION: DNN library initialization failed. "
                    "Look at the errors above for more details.\n");
    return 1;
}
