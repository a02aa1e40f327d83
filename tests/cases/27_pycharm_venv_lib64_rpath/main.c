/* A PyCharm-made venv with separate lib/ and lib64/ directories: torch sits
 * under lib64/python3.12/site-packages, the nvidia-* wheels under
 * lib/python3.12/site-packages, so libtorch_cuda.so's RPATH
 * $ORIGIN/../../nvidia/cudnn/lib names a directory that does not exist.
 *
 * Source:
 *   https://github.com/pytorch/pytorch/issues/104259
 *
 * import torch: loading libtorch_cuda.so fails on its DT_NEEDED
 * libcudnn.so.8; Python raises ImportError (exit 1).
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *t = dlopen(case_path("../lib64/python3.12/site-packages/torch/lib/libtorch_cuda.so"),
                     RTLD_NOW | RTLD_GLOBAL);
    if (t)
        return 0;
    const char *e = dlerror();
    const char *colon = strstr(e, ": libcudnn");
    fprintf(stderr, "ImportError: %s\n", colon ? colon + 2 : e);
    return 1;
}
