/* 13_xla_message: XLA's current cuDNN version message in stderr, explained
 * from the trace (finding CDT010, with CDT008 for the cause).
 *
 * Real-world situation: TensorFlow/XLA (built with cuDNN 9.19.0) opens cuDNN
 * by soname, dlopen("libcudnn.so.9", RTLD_NOW|RTLD_LOCAL), and calls it
 * through dlsym. Its library's RUNPATH names the pip wheel's directory, but
 * LD_LIBRARY_PATH, searched first, holds the system's cuDNN 9.14: after
 * cudnnCreate, CudnnSupport::Init compares the version cudnnGetProperty
 * reports with its build and logs "Loaded runtime CuDNN library: 9.14.0 but
 * source was compiled with: 9.19.0. …".
 * Sources (ids of data/sources.toml): XLA's rule, loader and exact message
 * [R21][R22][R23]; the loader's search order [R34].
 *
 * Built with a DT_RUNPATH to the wheel's directory, run from a venv's bin/.
 * Exits 1 after the message.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "fake_api.h"

#define BUILD_MAJOR 9
#define BUILD_MINOR 19
#define BUILD_PATCH 0

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    void *h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "Could not load dynamic library 'libcudnn.so.9'; dlerror: %s\n", dlerror());
        return 1;
    }
    cudnnStatus_t (*create)(cudnnHandle_t *) = (cudnnStatus_t(*)(cudnnHandle_t *))dlsym(h, "cudnnCreate");
    cudnnStatus_t (*prop)(libraryPropertyType, int *) =
        (cudnnStatus_t(*)(libraryPropertyType, int *))dlsym(h, "cudnnGetProperty");
    if (!create || !prop)
        return 1;
    cudnnHandle_t handle = NULL;
    cudnnStatus_t st = create(&handle);
    printf("cudnnCreate=%d\n", (int)st);
    if (st != CUDNN_STATUS_SUCCESS)
        return 1;
    int major = -1, minor = -1, patch = -1;
    prop(MAJOR_VERSION, &major);
    prop(MINOR_VERSION, &minor);
    prop(PATCH_LEVEL, &patch);
    printf("loaded cuDNN %d.%d.%d\n", major, minor, patch);
    if (major == BUILD_MAJOR && minor >= BUILD_MINOR)
        return 0;
    fprintf(stderr,
            "E0000 00:00:00.000000    1234 cuda_dnn.cc:536] Loaded runtime CuDNN library: %d.%d.%d "
            "but source was compiled with: %d.%d.%d.  CuDNN library needs to have matching major "
            "version and equal or higher minor version. If using a binary install, upgrade your "
            "CuDNN library.  If building from sources, make sure the library loaded at runtime is "
            "compatible with the version specified during compile configuration.\n",
            major, minor, patch, BUILD_MAJOR, BUILD_MINOR, BUILD_PATCH);
    return 1;
}
