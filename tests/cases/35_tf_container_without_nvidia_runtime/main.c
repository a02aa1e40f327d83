/* The TensorFlow GPU image started with plain `docker run` (no NVIDIA
 * runtime): the driver libraries are not mounted, so libcuda.so.1 is nowhere,
 * while the image's LD_LIBRARY_PATH names /usr/local/nvidia/lib(64), absent.
 *
 * Sources:
 *   https://github.com/tensorflow/tensorflow/issues/10642
 *   https://github.com/tensorflow/tensorflow/issues/13169
 *   https://github.com/openai/gpt-2/issues/204
 *
 * import tensorflow: loading _pywrap_tensorflow_internal.so fails on its
 * DT_NEEDED libcuda.so.1 (exit 1).
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *tf = dlopen(case_path("../lib/python3.5/dist-packages/tensorflow/python/_pywrap_tensorflow_internal.so"),
                      RTLD_NOW | RTLD_GLOBAL);
    if (tf)
        return 0;
    const char *e = dlerror();
    const char *colon = strstr(e, ": libcuda");
    fprintf(stderr,
            "  File \"/usr/lib/python3.5/imp.py\", line 342, in load_dynamic\n"
            "    return _load(spec)\n"
            "ImportError: %s\n\n"
            "Failed to load the native TensorFlow runtime.\n",
            colon ? colon + 2 : e);
    return 1;
}
