/* Stand-in for the cudnn-frontend wheel's compiled module (dynamic-loading
 * build): load_cudart_so() of include/cudnn_frontend_shim.h, which dlopens
 * each of {"libcudart.so.12", "libcudart.so.13"} with RTLD_NOW and refuses
 * more than one. Sources: see main.c. */
#include <dlfcn.h>
#include <stdio.h>

/* 0 when exactly one runtime loads; else the message in `msg`. */
__attribute__((visibility("default"))) int cudnn_frontend_load_cudart(char *msg, size_t n)
{
    static const char *const libs[] = {"libcudart.so.12", "libcudart.so.13"};
    int loaded = -1;
    for (int i = 0; i < 2; i++) {
        if (dlopen(libs[i], RTLD_NOW)) {
            if (loaded >= 0) {
                snprintf(msg, n, "Multiple libcudart libraries found: %s and %s", libs[loaded], libs[i]);
                return 1;
            }
            loaded = i;
        }
    }
    if (loaded < 0) {
        snprintf(msg, n, "Unable to load any libcudart.so.* library.");
        return 1;
    }
    return 0;
}
