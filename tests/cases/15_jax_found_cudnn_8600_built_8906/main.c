/* JAX 0.4.x pip (jax[cuda12_pip], built with cuDNN 8.9.6) while an older
 * cuDNN 8.6.0 sits in a directory on LD_LIBRARY_PATH.
 *
 * Sources:
 *   https://github.com/MIT-REALM/gcbfplus/issues/1
 *   https://github.com/jax-ml/jax/pull/17813
 *
 * jax/_src/xla_bridge.py _check_cuda_versions(): cuDNN compared with
 * scale_for_comparison=100; the backend factory's warning wraps the error
 * and JAX falls back to the CPU (exit 0).
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *x = dlopen(case_path("../lib/python3.10/site-packages/jaxlib/xla_extension.so"),
                     RTLD_NOW | RTLD_LOCAL);
    if (!x) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    long (*get)(void) = (long (*)(void))case_sym(x, "jax_cudnn_get_version");
    long v = get(), build = 8906;
    if (v >= 0 && build / 100 > v / 100)
        fprintf(stderr,
                "CUDA backend failed to initialize: Found cuDNN version %ld, but JAX was built against "
                "version %ld, which is newer. The copy of cuDNN that is installed must be at least as "
                "new as the version against which JAX was built. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun "
                "for more info.)\n",
                v, build);
    printf("[CpuDevice(id=0)]\n");
    return 0;
}
