/* torch imported (and used) before the first JAX array: libcudnn.so.9 is
 * already resident, torch's older copy, when JAX's plugin asks for it.
 *
 * Source:
 *   https://github.com/jax-ml/jax/issues/19004
 *
 * hawkinsp: "If you have two libraries that use cudnn, the first one to load
 * it "wins". If you load torch first, you end up with the older cudnn version
 * loaded by your torch version. … you can probably just work around by
 * loading JAX first." torch's cuDNN is 9.1.0 in torch/lib here (the thread's
 * numbers were not retrievable); JAX's wheel has 9.8.0. XLA's check fails.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *t = dlopen(case_path("../lib/python3.11/site-packages/torch/lib/libtorch_cuda.so"),
                     RTLD_NOW | RTLD_LOCAL);
    if (!t)
        return 98;
    size_t (*tv)(void) = (size_t(*)(void))case_sym(t, "torch_cudnn_version");
    if (tv() != 90100)
        return 97;
    void *j = dlopen(case_path("../lib/python3.11/site-packages/jax_plugins/xla_cuda12/xla_cuda_plugin.so"),
                     RTLD_NOW | RTLD_LOCAL);
    if (!j)
        return 96;
    int (*jv)(int *) = (int (*)(int *))case_sym(j, "xla_cudnn_version");
    int v[3];
    if (jv(v) != 0)
        return 95;
    if (v[0] == 9 && v[1] >= 8)
        return 0;
    fprintf(stderr,
            "E0000 00:00:1702678321.123456 2801 cuda_dnn.cc:522] Loaded runtime CuDNN library: %d.%d.%d "
            "but source was compiled with: 9.8.0.  CuDNN library needs to have matching major version "
            "and equal or higher minor version. If using a binary install, upgrade your CuDNN library.  "
            "If building from sources, make sure the library loaded at runtime is compatible with the "
            "version specified during compile configuration.\n"
            "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: DNN library initialization "
            "failed. Look at the errors above for more details.\n",
            v[0], v[1], v[2]);
    return 1;
}
