/* Python-like: the executable has no cuDNN dependency; an extension module
 * (lib/libtorchlike.so) that links cuDNN is dlopened later. */
#include "pin_common.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    void *t = dlopen("lib/libtorchlike.so", RTLD_NOW | RTLD_LOCAL);
    if (!t) {
        printf("dlopen(lib/libtorchlike.so): %s\n", dlerror());
        return 1;
    }
    printf("dlopen(lib/libtorchlike.so): %s\n", handle_path(t));
    void *h = dlopen("libcudnn.so.9", RTLD_LAZY | RTLD_NOLOAD);
    printf("libcudnn.so.9 (DT_NEEDED of libtorchlike.so): %s\n", handle_path(h));
    long (*ver)(void) = (long (*)(void))dlsym(t, "torchlike_cudnn_version");
    int (*adv)(void) = (int (*)(void))dlsym(t, "torchlike_adv_check");
    if (!ver || !adv) {
        printf("dlsym: %s\n", dlerror());
        return 1;
    }
    print_version("torchlike_cudnn_version()", ver());
    printf("torchlike_adv_check() = %d\n", adv());
    list_cudnn("main");
    return 0;
}
