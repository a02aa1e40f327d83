/* 01_duplicate_cudnn: two files of the same cuDNN library in one process
 * (finding CDT001).
 *
 * Real-world situation: PyTorch's libtorch_cuda.so links libcudnn.so.N and
 * finds it through its DT_RPATH (site-packages/nvidia/cudnn/lib), while
 * another component of the same process (a JAX/TensorFlow plugin, a ctypes
 * preload) dlopens a second copy by its absolute path with RTLD_LOCAL.
 * Sources (ids of data/sources.toml): PyTorch's DT_RPATH into
 * nvidia/cudnn/lib (CUDA_RPATHS and --force-rpath in
 * https://github.com/pytorch/pytorch/blob/799d09f215740cc4fb78e0bd278dce469e33ddcb/.ci/manywheel/build_cuda.sh)
 * and its _preload_cuda_deps [R25]; JAX ctypes-loads cuDNN by path [R27];
 * every symbol carries the soname as its version tag [E9], so both copies
 * live side by side.
 *
 * Built linked against libcudnn.so.N with a DT_RPATH.
 * usage: main OTHER_COPY   (an absolute path to another libcudnn.so.N)
 */
#include <dlfcn.h>
#include <stdio.h>

#include "fake_api.h"

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc != 2) {
        fprintf(stderr, "usage: %s OTHER_COPY\n", argv[0]);
        return 2;
    }
    printf("linked copy: cudnnGetVersion=%zu\n", cudnnGetVersion());
    void *other = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!other) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    size_t (*get_version)(void) = (size_t(*)(void))dlsym(other, "cudnnGetVersion");
    if (!get_version) {
        printf("dlsym: %s\n", dlerror());
        return 1;
    }
    printf("copy by path: cudnnGetVersion=%zu\n", get_version());
    return 0;
}
