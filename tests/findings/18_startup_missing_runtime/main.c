/* 18_startup_missing_runtime: a DT_NEEDED CUDA runtime missing at start-up
 * (finding CDT006, and the launcher's one-line summary of it).
 *
 * Real-world situation: a binary built against CUDA 12 (through a library
 * linked like libtorch_cuda.so, DT_NEEDED libcudart.so.12) run on a machine
 * or in a container that has no CUDA 12 runtime on the loader's path, often
 * one with CUDA 13 only: "error while loading shared libraries:
 * libcudart.so.12: cannot open shared object file: No such file or
 * directory", exit status 127, before main. A libcudart.so.13 does not fit a
 * request for libcudart.so.12 (another major, another ABI).
 * Sources (ids of data/sources.toml): sonames carry the major and where
 * the pip runtimes are installed [E1]; the loader's search [R34].
 *
 * Built linked against libtorchlike.so (lib.c, DT_RUNPATH $ORIGIN/lib),
 * which needs libcudart.so.12 (DT_RUNPATH $ORIGIN/../rt, removed after
 * linking). Never runs: the loader exits 127.
 */
#include <stdio.h>

int torchlike_runtime(void);

int main(void)
{
    printf("runtime %d\n", torchlike_runtime());
    return 0;
}
