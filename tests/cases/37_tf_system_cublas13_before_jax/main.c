/* TensorFlow imported before JAX (tensorflow_datasets): TF makes the system
 * CUDA 13.0 toolkit's libcublas.so.13 (ld.so cache) resident; JAX's CUDA 13
 * plugin then gets it instead of the pip cuBLAS and fails its check.
 *
 * Sources:
 *   https://github.com/trueagi-io/FabricPC/pull/45
 *   https://github.com/jax-ml/jax/issues/33561
 *
 * "importing TF makes the system libcublas.so.13 resident first; glibc
 * deduplicates by SONAME, so JAX's CUDA plug…". JAX's plugin check
 * (scale_for_comparison=100 on cuBLAS major*10000+minor*100+patch) fails and
 * JAX falls back to the CPU (exit 0). The numbers are the case's (the
 * report's text is cut after "Outdate").
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *tf = dlopen(case_path("../lib/python3.13/site-packages/tensorflow/libtensorflow_framework.so.2"),
                      RTLD_NOW | RTLD_GLOBAL);
    if (!tf)
        return 98;
    int (*load)(void) = (int (*)(void))case_sym(tf, "tf_load_gpu_libraries");
    if (load() != 0)
        return 97;
    void *jax = dlopen(case_path("../lib/python3.13/site-packages/jax_plugins/xla_cuda13/xla_cuda_plugin.so"),
                       RTLD_NOW | RTLD_LOCAL);
    if (!jax)
        return 96;
    int (*get)(void) = (int (*)(void))case_sym(jax, "jax_cublas_get_version");
    int v = get(), built = 130100, minimum = 130100;
    if (v / 100 >= minimum / 100)
        return 0;
    fprintf(stderr,
            "ERROR:2025-11-26 11:11:39,984:jax._src.xla_bridge:477: Jax plugin configuration error: "
            "Exception when calling jax_plugins.xla_cuda13.initialize()\n"
            "Traceback (most recent call last):\n"
            "RuntimeError: Outdated cuBLAS installation found.\n"
            "Version JAX was built against: %d\n"
            "Minimum supported: %d\n"
            "Installed version: %d\n"
            "The local installation version must be no lower than %d.\n",
            built, minimum, v, minimum);
    return 0;
}
