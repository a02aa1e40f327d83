/* 22_renamed_copies: CUDA runtimes under other names (issue 14): each is
 * shown under its family (cudart) with its real file name.
 *
 * Real-world situation: wheels repaired by auditwheel carry their own copy
 * of a library, file and SONAME renamed with a hash
 * (`foo.libs/libcudart-8a3b2c1d.so.12`); some packages vendor the runtime
 * under a name of their own (`_cudart.so`, SONAME `_cudart.so`), which only
 * what it exports (cudaRuntimeGetVersion) tells apart. Beside the
 * framework's libcudart.so.13 they are more CUDA runtimes in one process.
 * Sources (ids of data/sources.toml): sonames and symbol versions [E1][E9];
 * pip layouts [E1][E7].
 *
 * Usage: main LIB...: dlopens each library by path and prints what its
 * cudaRuntimeGetVersion says. Exits 0.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    for (int i = 1; i < argc; i++) {
        void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
        int (*get)(int *) = h ? (int (*)(int *))dlsym(h, "cudaRuntimeGetVersion") : NULL;
        int v = -1;
        int st = get ? get(&v) : -999;
        printf("runtime %d (status %d)\n", v, st);
    }
    return 0;
}
