/* The shim's self-test (CUDNN_TRACE_SELF_TEST=panic): the shim panics in
   its first la_objopen, before main. The program then loads a fake cuDNN
   (its path in argv[1]) and ends with status 3 after a line on stdout:
   tests/production.rs checks that it ran as without the shim, and that the
   shim noted its panic and traced the load that came after it. */
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
    if (argc < 2 || !dlopen(argv[1], RTLD_NOW)) {
        fprintf(stderr, "selftest: dlopen failed: %s\n", argc < 2 ? "no path" : dlerror());
        return 1;
    }
    printf("ran to the end\n");
    return 3;
}
