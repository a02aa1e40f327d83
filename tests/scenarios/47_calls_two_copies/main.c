/* Two copies of cuDNN in one process (PyTorch's own 9.19 and, say, a 9.14
 * that another extension opens by absolute path): each call must reach,
 * and be attributed to, the copy the program called. */
#include <dlfcn.h>
#include <stdio.h>

#include "fake_api.h"

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 2)
        return 2;
    printf("linked copy: cudnnGetVersion() = %zu\n", cudnnGetVersion());
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    size_t (*other)(void) = (size_t (*)(void))dlsym(h, "cudnnGetVersion");
    size_t (*cudart)(void) = (size_t (*)(void))dlsym(h, "cudnnGetCudartVersion");
    if (!other || !cudart)
        return 1;
    printf("opened copy: cudnnGetVersion() = %zu\n", other());
    printf("opened copy: cudnnGetCudartVersion() = %zu\n", cudart());
    printf("linked copy again: cudnnGetVersion() = %zu\n", cudnnGetVersion());
    printf("opened copy again: cudnnGetVersion() = %zu\n", other());
    return 0;
}
