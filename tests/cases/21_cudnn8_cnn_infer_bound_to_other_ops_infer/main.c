/* PyTorch with the pip cuDNN 8.9.2 while /usr/local/cuda/targets/x86_64-linux/lib,
 * on LD_LIBRARY_PATH, holds cuDNN 8 sub-libraries of another build (copied
 * into the toolkit, without ops_infer): the first model works, the second's
 * convolution loads the toolkit's cnn_infer, which cannot bind to the
 * wheel's ops_infer.
 *
 * Sources:
 *   https://github.com/pytorch/pytorch/issues/104591
 *   https://github.com/naver/dust3r/issues/198
 *   https://github.com/davisking/dlib/issues/2719
 *
 * "when I load one torch model, it works, but when I load two torch models,
 * it shows …". The wheel's dispatcher (through libtorch_cuda.so's DT_RPATH)
 * finds ops_infer through its RUNPATH $ORIGIN (the toolkit directory has
 * none); cnn_infer, later, through LD_LIBRARY_PATH first. Its versioned
 * reference to an internal ops_infer symbol fails; this machine's glibc
 * words it "undefined symbol: …, version …" (the report's older glibc: "… not
 * defined in file … with link time reference"); cuDNN 8 prints its two
 * lines and aborts.
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
    size_t (*version)(void) = (size_t(*)(void))case_sym(t, "torch_cudnn_version");
    int (*conv)(void) = (int (*)(void))case_sym(t, "torch_conv");
    if (version() != 8902) /* the first model */
        return 97;
    return conv(); /* the second model's convolution */
}
