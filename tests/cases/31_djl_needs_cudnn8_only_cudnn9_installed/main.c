/* DJL's PyTorch 2.0.1 native library (built with cuDNN 8, CUDA 11.8) on a
 * machine with only cuDNN 9.1.1 in /usr/lib64.
 *
 * Sources:
 *   https://github.com/deepjavalibrary/djl/issues/3159
 *   https://github.com/ultrasev/stream-whisper/issues/28
 *
 * The JVM's System.load of libtorch_cuda.so fails on its DT_NEEDED
 * libcudnn.so.8; Java reports the UnsatisfiedLinkError (exit 1).
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    const char *lib = case_path("../../.djl.ai/pytorch/2.0.1-20230709-cu118-linux-x86_64/libtorch_cuda.so");
    void *t = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    if (t)
        return 0;
    /* Java's text: the library's path, then the loader's error. */
    fprintf(stderr, "Caused by: java.lang.UnsatisfiedLinkError: %s: %s\n", lib, dlerror());
    return 1;
}
