/* wrapcall plt|dlsym N: calls cudnnGetVersion() N times, either through the
 * PLT (this program is linked against the fake libcudnn_graph.so.9, which
 * implements it) or through a pointer from dlsym on an RTLD_LOCAL handle, as
 * frameworks do. Traced, both reach a thunk of the shim (la_symbind64);
 * the difference per call is the wrapper's cost. Prints "loop_ns=" and
 * "ns_per_call=". */
#include <dlfcn.h>
#include <string.h>

#include "common.h"
#include "fake_api.h"

typedef size_t (*get_version_fn)(void);

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "plt") && strcmp(argv[1], "dlsym"))) {
        fprintf(stderr, "usage: wrapcall plt|dlsym N\n");
        return 2;
    }
    long n = arg_count(argv[2], "N");
    /* volatile: the compiler must make every call and keep the pointer. */
    get_version_fn volatile fn = NULL;
    if (!strcmp(argv[1], "dlsym")) {
        void *h = dlopen("libcudnn_graph.so.9", RTLD_NOW | RTLD_LOCAL);
        fn = h ? (get_version_fn)dlsym(h, "cudnnGetVersion") : NULL;
        if (!fn) {
            fprintf(stderr, "dlsym: %s\n", dlerror());
            return 1;
        }
    }
    size_t first = cudnnGetVersion(); /* binds the PLT entry, loads the engines */
    size_t volatile sink = 0;
    long long t0 = now_ns();
    if (!strcmp(argv[1], "plt")) {
        for (long i = 0; i < n; i++)
            sink += cudnnGetVersion();
    } else {
        for (long i = 0; i < n; i++)
            sink += fn();
    }
    long long dt = now_ns() - t0;
    printf("loop_ns=%lld\nns_per_call=%.3f\n", dt, n ? (double)dt / (double)n : 0.0);
    return sink == first * (size_t)n ? 0 : 1;
}
