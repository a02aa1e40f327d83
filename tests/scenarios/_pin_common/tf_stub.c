/* A TensorFlow-style cuDNN stub (tsl DsoLoader + the cudnn_stub): opens the
 * cuDNN SONAME of the major it was built for, RTLD_LAZY|RTLD_LOCAL, from
 * inside this library (so this library's RUNPATH applies), and finds every API
 * function with dlsym on that handle. CUDNN_MAJOR: 8 or 9. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>

#define STR_(x) #x
#define STR(x) STR_(x)
#define API __attribute__((visibility("default")))

static void *handle;

API const char *tf_cudnn_soname(void) { return "libcudnn.so." STR(CUDNN_MAJOR); }

API const char *tf_load_cudnn(void)
{
    handle = dlopen(tf_cudnn_soname(), RTLD_LAZY | RTLD_LOCAL);
    if (!handle)
        return dlerror();
    struct link_map *m = NULL;
    dlinfo(handle, RTLD_DI_LINKMAP, &m);
    return m ? m->l_name : "?";
}

API int tf_loaded(void) { return handle != NULL; }

API size_t tf_cudnn_get_version(void)
{
    size_t (*f)(void) = (size_t(*)(void))dlsym(handle, "cudnnGetVersion");
    return f ? f() : 0;
}
