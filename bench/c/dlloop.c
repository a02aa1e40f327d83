/* dlloop LIBRARY N: dlopen(LIBRARY, RTLD_NOW) then dlclose, N times. Each cycle
 * maps and unmaps the library, so a traced run writes a load and an unload
 * event per cycle for a CUDA-family name and nothing for another name. */
#include <dlfcn.h>

#include "common.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: dlloop LIBRARY N\n");
        return 2;
    }
    long n = arg_count(argv[2], "N");
    long long t0 = now_ns();
    for (long i = 0; i < n; i++) {
        void *h = dlopen(argv[1], RTLD_NOW);
        if (!h) {
            fprintf(stderr, "dlopen: %s\n", dlerror());
            return 1;
        }
        dlclose(h);
    }
    report_loop(t0);
    return 0;
}
