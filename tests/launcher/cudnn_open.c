/* cudnn_open: dlopen a cuDNN dispatcher (argv[1], default the bare name
 * libcudnn.so.9), call cudnnGetVersion through dlsym and print it. Then tell
 * whether libcuda.so.1 ended up in the process (RTLD_NOLOAD probe): the fake
 * engines library tries to dlopen it from its constructor (tests/launcher.rs). */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *name = argc > 1 ? argv[1] : "libcudnn.so.9";
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen(%s) failed: %s\n", name, dlerror());
        return 1;
    }
    size_t (*get_version)(void) = (size_t (*)(void))dlsym(h, "cudnnGetVersion");
    if (!get_version) {
        printf("dlsym(cudnnGetVersion) failed: %s\n", dlerror());
        return 1;
    }
    printf("cudnnGetVersion=%zu\n", get_version());
    void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    printf("libcuda.so.1 in process: %s\n", cuda ? "yes" : "no");
    return 0;
}
