#include <dlfcn.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

void a(void);

static void open_and_call(const char *name, const char *fn) {
    void *h = dlopen(name, RTLD_NOW);
    if (!h) {
        printf("dlopen(%s): %s\n", name, dlerror());
        return;
    }
    printf("dlopen(%s): ok\n", name);
    ((void (*)(void))dlsym(h, fn))();
}

int main(int argc, char **argv) {
    (void)argc; (void)argv;
    setvbuf(stdout, NULL, _IONBF, 0);
    /* The executable is started through a symlink (links/bin/prog ->
     * ../../real/prog). Its own $ORIGIN comes from /proc/self/exe. */
    printf("exe RPATH $ORIGIN/lib:\n");
    a();
    /* A library opened through a symlink to the file: $ORIGIN is the
     * directory of the path used, not of the realpath. */
    open_and_call("view/lib/libf.so", "f");
    /* A library opened through a symlinked directory, RUNPATH $ORIGIN/deps
     * and $ORIGIN/../deps2: ".." after a symlinked directory is resolved by
     * the kernel (physical parent), not lexically by ld.so. */
    open_and_call("dirview/libd.so", "d");
    return 0;
}
