/* Stand-in for jaxlib/xla_extension.so (jaxlib 0.4.x cuda12 pip, built with
 * cuDNN 8.9.6): DT_RUNPATH into the pip nvidia wheels, and the dlopen of
 * "libcudnn.so.8" from its own code, so that its RUNPATH applies.
 * Sources: see main.c. */
#include <dlfcn.h>
#include <stddef.h>

/* cuda_versions.cudnn_get_version(): -1 when cuDNN cannot be loaded. */
__attribute__((visibility("default"))) long jax_cudnn_get_version(void)
{
    void *h = dlopen("libcudnn.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    size_t (*v)(void) = (size_t(*)(void))dlsym(h, "cudnnGetVersion");
    return v ? (long)v() : -1;
}
