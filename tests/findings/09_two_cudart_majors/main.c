/* 09_two_cudart_majors: two CUDA runtime majors in one process (finding
 * CDT001, a warning: different sonames can coexist).
 *
 * Real-world situation: a CUDA 13 framework (cudart 13 from
 * site-packages/nvidia/cu13/lib, DT_RPATH) loads a plugin built for CUDA 12
 * that brings its own libcudart.so.12 (its RUNPATH points at
 * site-packages/nvidia/cuda_runtime/lib). Every cudart symbol carries the
 * soname as its version tag, so both runtimes live side by side, each with
 * its own state.
 * Sources (ids of data/sources.toml): sonames, symbol versions and pip
 * layouts of the cu11/cu12/cu13 runtimes (nvidia/cuda_runtime/lib for
 * CUDA 12, nvidia/cu13/lib for CUDA 13) [E1].
 *
 * Built linked against libcudart.so.13 (DT_RPATH).
 * usage: main PLUGIN   (plugin.c, built with DT_NEEDED libcudart.so.12)
 */
#include <dlfcn.h>
#include <stdio.h>

#include "fake_api.h"

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc != 2) {
        fprintf(stderr, "usage: %s PLUGIN\n", argv[0]);
        return 2;
    }
    int rt = 0;
    cudaRuntimeGetVersion(&rt);
    printf("framework runtime=%d\n", rt);
    void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!plugin) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    int (*plugin_runtime)(void) = (int (*)(void))dlsym(plugin, "plugin_runtime_version");
    printf("plugin runtime=%d\n", plugin_runtime ? plugin_runtime() : -1);
    return 0;
}
