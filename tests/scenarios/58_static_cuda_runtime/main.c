/* Issue 14, item 6: which object asks the driver for its entry points. A
 * module with a static CUDA runtime, and (for comparison) the shared
 * runtime libcudart.so.13, each count the devices; both fetch driver
 * functions with cuGetProcAddress_v2. */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    void *m = dlopen("site/cupy_backends/cuda/api/runtime.so", RTLD_NOW | RTLD_LOCAL);
    int (*count)(void) = m ? (int (*)(void))dlsym(m, "app_device_count") : NULL;
    printf("static runtime: %d device(s)\n", count ? count() : -999);
    void *rt = dlopen("rt13/libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
    int (*get_count)(int *) = rt ? (int (*)(int *))dlsym(rt, "cudaGetDeviceCount") : NULL;
    int n = -1;
    int e = get_count ? get_count(&n) : -999;
    printf("libcudart.so.13: status %d, %d device(s)\n", e, n);
    return 0;
}
