/* Stand-in for paddlepaddle-gpu 1.7.2.post97's core library: dlopens
 * "libcudnn.so.7" (the system cuDNN, through LD_LIBRARY_PATH) and uses
 * functions of the version it was built for (7.6). Sources: see main.c. */
#include <dlfcn.h>
#include <stddef.h>

__attribute__((visibility("default"))) long paddle_cudnn_version(void)
{
    void *h = dlopen("libcudnn.so.7", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return -1;
    size_t (*v)(void) = (size_t(*)(void))dlsym(h, "cudnnGetVersion");
    return v ? (long)v() : -1;
}
