/* 15_jax_message: JAX's "Outdated cuDNN installation found" message in
 * stderr, explained from the trace (finding CDT010, with CDT008).
 *
 * Real-world situation: JAX (jax-cuda13-plugin built with cuDNN 9.19.0)
 * ctypes-loads site-packages/nvidia/cudnn/lib/libcudnn.so.9 by its path
 * (RTLD_LOCAL), asks cudnnGetVersion, and compares major.minor (versions
 * divided by 100) with its build. With the system's cuDNN 9.14 on
 * LD_LIBRARY_PATH the dispatcher from the wheel gets graph 9.14 (searched
 * before its RUNPATH $ORIGIN) and answers 91400.
 * Sources (ids of data/sources.toml): JAX's rule, loading and message
 * [R27]; the dispatcher reports graph's version [E5]; the loader's search
 * order [R34].
 *
 * usage: main PATH_TO_LIBCUDNN_SO_9   (run from a venv's bin/). Exits 1
 * after the message.
 */
#include <dlfcn.h>
#include <stdio.h>

#define BUILT_AGAINST 91900

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc != 2)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    size_t (*get_version)(void) = h ? (size_t(*)(void))dlsym(h, "cudnnGetVersion") : NULL;
    if (!get_version) {
        fprintf(stderr, "RuntimeError: Unable to use CUDA because of the following issues with "
                        "CUDA components:\nUnable to load cuDNN. Is it installed?\n");
        return 1;
    }
    size_t installed = get_version();
    printf("cudnnGetVersion=%zu\n", installed);
    if (installed / 100 >= BUILT_AGAINST / 100)
        return 0;
    fprintf(stderr,
            "RuntimeError: Unable to use CUDA because of the following issues with CUDA components:\n"
            "Outdated cuDNN installation found.\n"
            "Version JAX was built against: %d\n"
            "Minimum supported: %d\n"
            "Installed version: %zu\n"
            "The local installation version must be no lower than %d.\n",
            BUILT_AGAINST, BUILT_AGAINST / 100, installed, BUILT_AGAINST / 100);
    return 1;
}
