/* Issue 14, item 1, as reported: a program loads the wheel's libcudnn.so.9,
 * calls cudnnGetVersion, then loads libcudnn_ops.so.9 and never calls its
 * cudnnOpsVersionCheck. Real cuDNN 9's *VersionCheck functions dlopen
 * libcuda.so.1 and call cuDriverGetVersion and cuInit (the fakes do too), so a
 * tracer that calls one to learn the sub-library's version loads and
 * initialises the driver behind the program's back: the driver's log, its
 * presence and the thread count would show it. */
#include "observe.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    observe_reset();
    observe("start");
    void *cudnn = dlopen("pip/libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!cudnn) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    size_t (*get_version)(void) = (size_t (*)(void))dlsym(cudnn, "cudnnGetVersion");
    printf("cudnnGetVersion() = %zu\n", get_version ? get_version() : 0);
    observe("after cudnnGetVersion");
    void *ops = dlopen("pip/libcudnn_ops.so.9", RTLD_NOW | RTLD_LOCAL);
    printf("libcudnn_ops.so.9: %s\n", ops ? "loaded" : dlerror());
    observe("after loading libcudnn_ops.so.9");
    return 0;
}
