/* jax[cuda11_pip] whose "nvidia-cudnn-cu11>=8.8" resolved to the
 * date-versioned release 2022.5.19: a cuDNN 8 whose ops_infer needs
 * libcublas.so.11, which no installed package provides.
 *
 * Source:
 *   https://github.com/jax-ml/jax/issues/16625
 *
 * JAX reads the cuDNN version; the dispatcher cannot load ops_infer and
 * aborts; Python's faulthandler reports the abort.
 */
#include "framework.h"

static void fatal(int sig)
{
    static const char msg[] = "Fatal Python error: Aborted\n";
    if (write(2, msg, sizeof msg - 1) < 0) {
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(void)
{
    case_unbuffered();
    signal(SIGABRT, fatal);
    void *x = dlopen(case_path("../lib/python3.10/site-packages/jaxlib/xla_extension.so"),
                     RTLD_NOW | RTLD_LOCAL);
    if (!x) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    long (*get)(void) = (long (*)(void))case_sym(x, "jax_cudnn_get_version");
    return get() > 0 ? 0 : 97;
}
