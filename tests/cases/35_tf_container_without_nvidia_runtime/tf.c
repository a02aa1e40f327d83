/* Stand-in for TensorFlow 1.x's _pywrap_tensorflow_internal.so: DT_NEEDED
 * libcuda.so.1. Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) int tf_init(void)
{
    return cuInit(0);
}
