#include <dlfcn.h>
#include <stdio.h>

static void *open_(const char *name) {
    void *h = dlopen(name, RTLD_NOW);
    if (!h) printf("dlopen(%s): %s\n", name, dlerror());
    return h;
}
static int bump(void *h) { return ((int (*)(void))dlsym(h, "bump"))(); }

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("open by path\n");
    void *a = open_("lib/libcounted.so.1");
    printf("bump: %d\n", bump(a));
    printf("open again by the same path\n");
    void *b = open_("lib/libcounted.so.1");
    printf("same handle: %s, bump: %d\n", a == b ? "yes" : "no", bump(b));
    printf("open by SONAME (bare name, RUNPATH)\n");
    void *c = open_("libcounted.so.1");
    printf("same handle: %s, bump: %d\n", a == c ? "yes" : "no", bump(c));
    printf("open through a symlinked path to the same file\n");
    void *d = open_("alias/libother-name.so");
    printf("same handle: %s, bump: %d\n", a == d ? "yes" : "no", bump(d));
    printf("open a copy of the file (different inode, same SONAME)\n");
    void *e = open_("copy/libcounted.so.1");
    printf("same handle: %s\n", a == e ? "yes" : "no");
    printf("close all four references\n");
    dlclose(d); dlclose(c); dlclose(b);
    printf("still there after 3 closes: %s\n", dlopen("lib/libcounted.so.1", RTLD_NOW | RTLD_NOLOAD) ? "yes" : "no");
    dlclose(a); /* the NOLOAD reference */
    dlclose(a);
    printf("still there after all closes: %s\n", dlopen("lib/libcounted.so.1", RTLD_NOW | RTLD_NOLOAD) ? "yes" : "no");
    printf("reopen\n");
    void *f = open_("lib/libcounted.so.1");
    printf("bump after reopen: %d\n", bump(f));
    dlclose(f);
    printf("reopen by the symlink path first\n");
    void *g = open_("alias/libother-name.so");
    printf("bump: %d\n", bump(g));
    void *h = open_("libcounted.so.1");
    printf("soname after symlink open, same handle: %s\n", g == h ? "yes" : "no");
    return 0;
}
