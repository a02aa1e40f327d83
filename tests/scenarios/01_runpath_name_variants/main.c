#include <dlfcn.h>
#include <stdio.h>

void x_init(void);
const char *x_version(void);

static void reopen(const char *name) {
    void *h = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
    printf("main: %s already loaded: %s\n", name, h ? "yes" : "no");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    x_init();
    /* Requests the loader serves from objects already there (by name and by
     * SONAME), from the main program rather than from libx. */
    reopen("libx.so.9");
    reopen("libx_graph.so.9");
    reopen("libx_ops.so.9");
    reopen("libx_cnn.so.9");
    void *h = dlopen("libx_ops.so.9", RTLD_NOW);
    printf("main: dlopen(libx_ops.so.9) from main: %s\n", h ? "ok" : dlerror());
    return 0;
}
