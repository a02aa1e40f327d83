/* torch 1.12.0+cu113 (cuDNN 8.3.2 bundled in torch/lib) on a cluster whose
 * cuDNN 8.0.3 module directory is first on LD_LIBRARY_PATH.
 *
 * Sources:
 *   https://github.com/pytorch/pytorch/issues/80637
 *   https://github.com/pytorch/functorch/issues/926
 *   https://github.com/pytorch/pytorch/pull/80877
 *
 * libtorch_cuda.so was linked with DT_RUNPATH (not DT_RPATH), so the
 * LD_LIBRARY_PATH copy beats the bundled one; torch.backends.cudnn.version()
 * raises with the 1.x wording and tuples.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *t = dlopen(case_path("../lib/python3.8/site-packages/torch/lib/libtorch_cuda.so"),
                     RTLD_NOW | RTLD_LOCAL);
    if (!t) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    void (*runtime)(int *) = (void (*)(int *))case_sym(t, "torch_cudnn_runtime");
    int v[3];
    runtime(v);
    if (v[0] == 8 && v[1] >= 3)
        return 0;
    fprintf(stderr,
            "Traceback (most recent call last):\n"
            "  File \"<stdin>\", line 1, in <module>\n"
            "  File \"/private/home/rzou/local/miniconda3/envs/py38/lib/python3.8/site-packages/torch/backends/cudnn/__init__.py\", line 50, in version\n"
            "    if not _init():\n"
            "  File \"/private/home/rzou/local/miniconda3/envs/py38/lib/python3.8/site-packages/torch/backends/cudnn/__init__.py\", line 39, in _init\n"
            "    raise RuntimeError(\n"
            "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (8, 3, 2) but linked against (%d, %d, %d)\n",
            v[0], v[1], v[2]);
    return 1;
}
