/* torch 2.0.1+cu118 (pip nvidia-cudnn-cu11 8.7.0.84) with a toolkit copy of
 * cuDNN 8.6.0 in /usr/local/cuda/lib64 on LD_LIBRARY_PATH.
 *
 * Sources:
 *   https://github.com/facebookresearch/audiocraft/issues/186
 *   https://github.com/bmaltais/kohya_ss/issues/1096
 *   https://github.com/pytorch/pytorch/pull/80877
 *
 * libtorch_cuda.so finds the wheel's dispatcher through its DT_RPATH, but
 * the dispatcher's dlopen of libcudnn_ops_infer.so.8 searches LD_LIBRARY_PATH
 * before its own RUNPATH, so the version PyTorch reads is 8.6.0. The text is
 * 2.0.1's, with its glued sentences ("cuDNN.Looks like", "cudnnPlease").
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *t = dlopen(case_path("../lib/python3.10/site-packages/torch/lib/libtorch_cuda.so"),
                     RTLD_NOW | RTLD_LOCAL);
    if (!t) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    void (*runtime)(int *) = (void (*)(int *))case_sym(t, "torch_cudnn_runtime");
    int v[3];
    runtime(v);
    if (v[0] == 8 && v[1] >= 7)
        return 0;
    fprintf(stderr,
            "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 7, 0) but "
            "found runtime version (%d, %d, %d). PyTorch already comes bundled with cuDNN. One option to "
            "resolving this error is to ensure PyTorch can find the bundled cuDNN.Looks like your "
            "LD_LIBRARY_PATH contains incompatible version of cudnnPlease either remove it from the path "
            "or install cudnn (8, 7, 0)\n",
            v[0], v[1], v[2]);
    return 1;
}
