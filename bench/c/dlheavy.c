/* dlheavy DIR NLIBS NREOPEN: the dlopen-heavy program of issue 10. Opens
 * DIR/libcublas_bench_0000.so … (NLIBS distinct CUDA-named libraries, kept
 * open), then NREOPEN more dlopen/dlclose pairs of those same paths in turn:
 * each is served by the object already loaded (the loader only compares
 * names), as when a framework re-opens its libraries in a loop. */
#define _GNU_SOURCE /* asprintf */
#include <dlfcn.h>

#include "common.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: dlheavy DIR NLIBS NREOPEN\n");
        return 2;
    }
    long nlibs = arg_count(argv[2], "NLIBS"), nre = arg_count(argv[3], "NREOPEN");
    char **paths = calloc((size_t)nlibs + 1, sizeof *paths);
    for (long i = 0; i < nlibs; i++) {
        if (asprintf(&paths[i], "%s/libcublas_bench_%04ld.so", argv[1], i) < 0)
            return 1;
    }
    long long t0 = now_ns();
    for (long i = 0; i < nlibs; i++) {
        if (!dlopen(paths[i], RTLD_NOW)) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 1;
        }
    }
    for (long j = 0; nlibs > 0 && j < nre; j++) {
        void *h = dlopen(paths[j % nlibs], RTLD_NOW);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 1;
        }
        dlclose(h);
    }
    report_loop(t0);
    return 0;
}
