/* Stand-in for conda tensorflow-gpu 1.4.1's _pywrap_tensorflow_internal.so
 * (built with cuDNN 7.0.5): its dso_loader dlopens "libcudnn.so.7" from its
 * own code, so its RUNPATH (the env's lib directory) is searched.
 * Sources: see main.c. */
#include <dlfcn.h>
#include <stddef.h>

__attribute__((visibility("default"))) long tf_cudnn_version(void)
{
    void *h = dlopen("libcudnn.so.7", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    size_t (*v)(void) = (size_t(*)(void))dlsym(h, "cudnnGetVersion");
    return v ? (long)v() : -1;
}
