/* jax 0.4.30 with a conda-forge jaxlib built with cuDNN 8.9.7 and the env's
 * cudnn 8.9.7: JAX's hard minimum 9100 rejects the very cuDNN it was built
 * with.
 *
 * Sources:
 *   https://github.com/conda-forge/jaxlib-feedstock/issues/277
 *   https://github.com/conda-forge/jax-feedstock/issues/149
 *   https://github.com/jax-ml/jax/pull/22157
 *
 * jax/_src/xla_bridge.py (0.4.30): _version_check("cuDNN", …,
 * scale_for_comparison=100, min_supported_version=9100), passed =
 * min_supported_version <= version; 9100 is below every cuDNN 9 value
 * (90000+) and above every cuDNN 8 one: "cuDNN 9 required". JAX falls back to
 * the CPU (exit 0). The doubled period is the real text's.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *x = dlopen(case_path("../lib/python3.11/site-packages/jaxlib/xla_extension.so"),
                     RTLD_NOW | RTLD_LOCAL);
    if (!x) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    long (*get)(void) = (long (*)(void))case_sym(x, "jax_cudnn_get_version");
    long v = get(), build = 8907, minimum = 9100;
    if (v >= 0 && minimum > v)
        fprintf(stderr,
                "CUDA backend failed to initialize: Unable to use CUDA because of the following issues "
                "with CUDA components:\n"
                "Outdated cuDNN installation found.\n"
                "Version JAX was built against: %ld\n"
                "Minimum supported: %ld\n"
                "Installed version: %ld\n"
                "The local installation version must be no lower than %ld..(Set TF_CPP_MIN_LOG_LEVEL=0 "
                "and rerun for more info.)\n",
                build, minimum, v, minimum);
    printf("[CpuDevice(id=0)]\n");
    return 0;
}
