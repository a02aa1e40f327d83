/* Another tool's LD_PRELOAD library that wraps dlopen (as profilers and
 * GPU-sharing shims do) and forwards with dlsym(RTLD_NEXT, "dlopen"). */
#define _GNU_SOURCE
#include <dlfcn.h>
static int calls;
void *dlopen(const char *name, int flags) {
    static void *(*real)(const char *, int);
    if (!real) real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    calls++;
    return real(name, flags);
}
int wrapper_calls(void) { return calls; }
