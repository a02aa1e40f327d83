/* Issue 11 items 2 and 4: noisy.c N writes a line on stderr and makes N
   events (failed loads of CUDA-family names). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1;
    fprintf(stderr, "to-stderr\n");
    char name[64];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "libcudnn_noisy_%d.so.9", i);
        dlopen(name, RTLD_NOW);
    }
    printf("done\n");
    return 0;
}
