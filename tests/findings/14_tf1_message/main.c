/* 14_tf1_message: TensorFlow 1.x's old "compatibility version" message in
 * stderr, explained from the trace (finding CDT010).
 *
 * Real-world situation: TensorFlow's old CudnnSupport::Init dlopened
 * "libcudnn.so.<major>" and compared the "compatibility version"
 * (cudnnGetVersion() / 100 * 100) of the loaded library with its build's;
 * they had to be equal. Here a build against cuDNN 8.9.7 (the pip wheel,
 * found only through the program's RUNPATH) meets an 8.6.0 install that
 * LD_LIBRARY_PATH names first. TF 1.x shipped for cuDNN 7, which the fakes
 * do not build; the message is TF's template with cuDNN 8 numbers.
 * Sources (ids of data/sources.toml): TF 1.x's rule and exact message
 * [R19][R19b]; the v8 version encoding [R2]; the loader's search order
 * [R34].
 *
 * Built with a DT_RUNPATH to the wheel's directory, run from a venv's bin/.
 * Exits 1 after the message.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "fake_api.h"

#define CUDNN_VERSION_BUILT 8907

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    void *h = dlopen("libcudnn.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "Could not load dynamic library 'libcudnn.so.8'; dlerror: %s\n", dlerror());
        return 1;
    }
    size_t (*get_version)(void) = (size_t(*)(void))dlsym(h, "cudnnGetVersion");
    if (!get_version)
        return 1;
    size_t loaded = get_version();
    printf("cudnnGetVersion=%zu\n", loaded);
    size_t loaded_compat = loaded / 100 * 100, built_compat = CUDNN_VERSION_BUILT / 100 * 100;
    if (loaded_compat == built_compat)
        return 0;
    fprintf(stderr,
            "E tensorflow/stream_executor/cuda/cuda_dnn.cc:343] Loaded runtime CuDNN library: %zu "
            "(compatibility version %zu) but source was compiled with %d (compatibility version "
            "%zu).  If using a binary install, upgrade your CuDNN library to match.  If building "
            "from sources, make sure the library loaded at runtime matches a compatible version "
            "specified during compile configuration.\n",
            loaded, loaded_compat, CUDNN_VERSION_BUILT, built_compat);
    return 1;
}
