/* Stand-in for conda-forge jaxlib 0.4.30's xla_extension.so (built with
 * cuDNN 8.9.7): DT_RUNPATH to the env's lib, dlopen("libcudnn.so.8") from
 * its own code. Sources: see main.c. */
#include <dlfcn.h>
#include <stddef.h>

__attribute__((visibility("default"))) long jax_cudnn_get_version(void)
{
    void *h = dlopen("libcudnn.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    size_t (*v)(void) = (size_t(*)(void))dlsym(h, "cudnnGetVersion");
    return v ? (long)v() : -1;
}
