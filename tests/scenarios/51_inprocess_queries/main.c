/* Every query the shim still makes inside the program (issue 14, item 1),
 * against fakes that would show a side effect: each version function leaves
 * errno set to $FAKE_ERRNO, cuInit starts a thread and pins the driver, the
 * driver logs its constructor, cuInit and cuDriverGetVersion, graph's first
 * API call loads its engines, an 11.x runtime's cudaRuntimeGetVersion looks
 * for the driver. The program sets errno before each step and prints it
 * after, with what observe() sees. Traced, the shim asks libcudart.so.13
 * (cudaRuntimeGetVersion) when its dlopen returns and libcudnn_graph (its
 * three getters) once the program's cudnnGetVersion has returned; nothing of
 * it may show. */
#include <errno.h>

#include "observe.h"

static void *open_lib(const char *path)
{
    errno = 1000;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    int e = errno;
    printf("dlopen(%s): %s, errno %d\n", path, h ? "ok" : dlerror(), e);
    return h;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    observe_reset();
    observe("start");
    open_lib("rt13/libcudart.so.13");
    open_lib("rt11/libcudart.so.11.0");
    observe("runtimes loaded");

    void *cudnn = open_lib("pip/libcudnn.so.9");
    if (!cudnn)
        return 1;
    size_t (*get_version)(void) = (size_t (*)(void))dlsym(cudnn, "cudnnGetVersion");
    if (!get_version)
        return 1;
    errno = 1001;
    size_t v = get_version();
    printf("cudnnGetVersion() = %zu, errno %d\n", v, errno);
    errno = 1002;
    v = get_version();
    printf("cudnnGetVersion() again = %zu, errno %d\n", v, errno);
    observe("cuDNN asked");

    open_lib("libcuda.so.1");
    observe("driver loaded");
    return 0;
}
