#define _GNU_SOURCE /* RTLD_DEFAULT, RTLD_NEXT: glibc before 2.34 needs it */
#include <dlfcn.h>
#include <stdio.h>
#include <stddef.h>

static void show(const char *what, void *p) {
    const char *e = dlerror();
    printf("%-44s %s", what, p ? "found" : "NULL");
    if (!p) printf(" (dlerror: %s)", e ? e : "(null)");
    printf("\n");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    void *h = dlopen("lib/libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!h) { printf("dlopen: %s\n", dlerror()); return 1; }
    size_t (*ver)(void) = (size_t (*)(void))dlsym(h, "cudnnGetVersion");
    show("dlsym(handle, cudnnGetVersion)", (void *)ver);
    if (ver) printf("cudnnGetVersion() = %zu\n", ver());
    const char *(*err)(int) = (const char *(*)(int))dlsym(h, "cudnnGetErrorString");
    show("dlsym(handle, cudnnGetErrorString)", (void *)err);
    if (err) printf("cudnnGetErrorString(1) = %s\n", err(1));
    int (*calls)(void) = (int (*)(void))dlsym(h, "cudnn_calls");
    if (calls) printf("calls seen by the library: %d\n", calls());
    /* RTLD_LOCAL: not in the global scope. */
    show("dlsym(RTLD_DEFAULT, cudnnGetVersion)", dlsym(RTLD_DEFAULT, "cudnnGetVersion"));
    show("dlsym(RTLD_DEFAULT, cudnnGetErrorString)", dlsym(RTLD_DEFAULT, "cudnnGetErrorString"));
    show("dlsym(RTLD_NEXT, cudnnGetVersion)", dlsym(RTLD_NEXT, "cudnnGetVersion"));
    show("dlsym(handle, nonexistent)", dlsym(h, "cudnnNoSuchFunction"));
    void *self = dlopen(NULL, RTLD_NOW);
    show("dlsym(dlopen(NULL), cudnnGetVersion)", dlsym(self, "cudnnGetVersion"));
    /* The same library by SONAME: the RTLD_LOCAL object is reused. */
    void *h2 = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    printf("dlopen(libcudnn.so.9) by soname: %s\n", h2 == h ? "same handle" : h2 ? "other handle" : dlerror());
    /* RTLD_GLOBAL library: visible through RTLD_DEFAULT. */
    void *g = dlopen("lib/libglob.so", RTLD_NOW | RTLD_GLOBAL);
    show("dlopen(lib/libglob.so, RTLD_GLOBAL)", g);
    int (*gf)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "glob_fn");
    show("dlsym(RTLD_DEFAULT, glob_fn)", (void *)gf);
    if (gf) printf("glob_fn() = %d\n", gf());
    /* Promote the local one to global: now RTLD_DEFAULT finds it. */
    void *h3 = dlopen("lib/libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    printf("RTLD_NOLOAD|RTLD_GLOBAL: %s\n", h3 == h ? "same handle" : h3 ? "other handle" : "NULL");
    size_t (*ver2)(void) = (size_t (*)(void))dlsym(RTLD_DEFAULT, "cudnnGetVersion");
    show("dlsym(RTLD_DEFAULT, cudnnGetVersion) after", (void *)ver2);
    if (ver2) printf("cudnnGetVersion() = %zu, same pointer: %s\n", ver2(), ver2 == ver ? "yes" : "no");
    if (calls) printf("calls seen by the library: %d\n", calls());
    return 0;
}
