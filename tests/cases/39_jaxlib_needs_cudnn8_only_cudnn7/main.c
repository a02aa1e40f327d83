/* jaxlib 0.1.55+cuda110 (TensorFlow's dso_loader inside) needs libcudnn.so.8;
 * the directories on LD_LIBRARY_PATH hold only cuDNN 7.6.0.
 *
 * Sources:
 *   https://github.com/jax-ml/jax/issues/5464
 *   https://github.com/SYSTRAN/faster-whisper/issues/885
 *
 * dso_loader dlopens "libcudnn.so.8", logs the failure with LD_LIBRARY_PATH,
 * and the GPU is skipped: JAX runs on the CPU (exit 0).
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *h = dlopen("libcudnn.so.8", RTLD_NOW | RTLD_LOCAL);
    if (h)
        return 0;
    const char *llp = getenv("LD_LIBRARY_PATH");
    fprintf(stderr,
            "2021-01-19 21:40:57.616373: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] "
            "Could not load dynamic library 'libcudnn.so.8'; dlerror: %s; LD_LIBRARY_PATH: %s\n"
            "2021-01-19 21:40:57.616390: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1757] Cannot "
            "dlopen some GPU libraries. Please make sure the missing libraries mentioned above are "
            "installed properly if you would like to use GPU. Follow the guide at "
            "https://www.tensorflow.org/install/gpu for how to download and setup the required libraries "
            "for your platform.\n"
            "Skipping registering GPU devices...\n",
            dlerror(), llp ? llp : "");
    return 0;
}
