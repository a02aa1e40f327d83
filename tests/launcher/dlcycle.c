/* dlcycle: dlopen(argv[1]) and dlclose it argv[2] times, and each time ask
 * for a CUDA library that is not there (argv[3]) and read dlerror(), as a
 * program that loads a plugin in a loop does. Every cycle writes the same
 * events but for their seq and time: `report` folds them (tests/launcher.rs). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: dlcycle LIB N MISSING\n");
        return 2;
    }
    long n = strtol(argv[2], NULL, 10);
    for (long i = 0; i < n; i++) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            printf("dlopen(%s) failed: %s\n", argv[1], dlerror());
            return 1;
        }
        if (dlopen(argv[3], RTLD_NOW) || !dlerror())
            return 1;
        dlclose(h);
    }
    printf("%ld cycles\n", n);
    return 0;
}
