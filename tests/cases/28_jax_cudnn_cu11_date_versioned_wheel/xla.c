/* Stand-in for jaxlib's xla_extension.so (cuda11_pip): DT_RUNPATH into the
 * pip nvidia wheels, dlopen("libcudnn.so.8") from its own code. Sources: see
 * main.c. */
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
