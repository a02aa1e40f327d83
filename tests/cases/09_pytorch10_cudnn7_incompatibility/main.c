/* PyTorch 1.0.0 (built with cuDNN 7.4.1) with a cuDNN 7.3.1 first on
 * LD_LIBRARY_PATH.
 *
 * Sources:
 *   https://github.com/akanimax/T2F/issues/6
 *   https://github.com/soumith/cudnn.torch/issues/396
 *
 * torch/backends/cudnn/__init__.py (1.0) decodes the integers: majors must
 * be equal and, from cuDNN 7 on, the runtime minor at least the build's;
 * 7.3 < 7.4 fails with the "incompatibility" wording (integers; later 1.x
 * put tuples in the same text).
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *c = dlopen(case_path("../lib/python3.6/site-packages/torch/_C.cpython-36m-x86_64-linux-gnu.so"),
                     RTLD_NOW | RTLD_GLOBAL);
    if (!c) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    int (*compiled)(void) = (int (*)(void))case_sym(c, "torch_cudnn_compiled_version");
    size_t (*global_version)(void) = (size_t(*)(void))case_sym(RTLD_DEFAULT, "cudnnGetVersion");
    long v = (long)global_version(), b = compiled();
    long rmaj = v / 1000, rmin = (v % 1000) / 100, bmaj = b / 1000, bmin = (b % 1000) / 100;
    int ok = rmaj == bmaj && (bmaj < 7 ? rmin == bmin : rmin >= bmin);
    if (ok)
        return 0;
    fprintf(stderr,
            "Traceback (most recent call last):\n"
            "  File \"main.py\", line 97, in <module>\n"
            "    main(parse_arguments())\n"
            "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against %ld but linked against %ld\n",
            b, v);
    return 1;
}
