/* Versions read from the libraries themselves, in a way the program cannot
 * notice: the driver is never initialised (its cuInit counter stays 0), the
 * runtimes' and cuDNN's answers and loads are what they are untraced. */
#include <dlfcn.h>
#include <stdio.h>

#include "fake_api.h"

int fake_cuda_init_calls(void); /* the fake driver's own counter */

static void *open_or_die(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        printf("dlopen(%s): %s\n", path, dlerror());
    return h;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("cuInit calls at start: %d\n", fake_cuda_init_calls());
    if (!open_or_die("rt13/libcudart.so.13") || !open_or_die("rt11/libcudart.so.11.0"))
        return 1;
    printf("cuInit calls after loading the runtimes: %d\n", fake_cuda_init_calls());

    void *h = open_or_die("v8/libcudnn.so.8");
    if (!h)
        return 1;
    size_t (*ver)(void) = (size_t (*)(void))dlsym(h, "cudnnGetVersion");
    cudnnStatus_t (*cnn)(void) = (cudnnStatus_t (*)(void))dlsym(h, "cudnnCnnInferVersionCheck");
    cudnnStatus_t (*ops)(void) = (cudnnStatus_t (*)(void))dlsym(h, "cudnnOpsTrainVersionCheck");
    if (!ver || !cnn || !ops)
        return 1;
    printf("cudnnGetVersion() = %zu\n", ver());
    printf("cudnnCnnInferVersionCheck() = %d\n", (int)cnn());
    printf("cudnnOpsTrainVersionCheck() = %d\n", (int)ops());
    printf("cuInit calls at the end: %d\n", fake_cuda_init_calls());
    return 0;
}
