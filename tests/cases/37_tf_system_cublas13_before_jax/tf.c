/* Stand-in for the tensorflow CUDA wheel's libtensorflow_framework.so.2:
 * dlopens the CUDA libraries by SONAME at import (no RUNPATH into the pip
 * nvidia wheels). Sources: see main.c. */
#include <dlfcn.h>

__attribute__((visibility("default"))) int tf_load_gpu_libraries(void)
{
    return dlopen("libcublas.so.13", RTLD_NOW | RTLD_GLOBAL) ? 0 : 1;
}
