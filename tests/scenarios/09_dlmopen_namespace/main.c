#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>

static void *open_in(Lmid_t ns, const char *path, const char *label) {
    void *h = dlmopen(ns, path, RTLD_NOW);
    if (!h) { printf("%s: dlmopen: %s\n", label, dlerror()); return NULL; }
    Lmid_t got = -1;
    dlinfo(h, RTLD_DI_LMID, &got);
    /* The number of a new namespace is not printed: an audit module occupies
     * namespace 1 when LD_AUDIT is set, so only "base or not" is stable. */
    printf("%s: loaded in %s namespace\n", label, got == LM_ID_BASE ? "the base" : "a new");
    return h;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    void *base = open_in(LM_ID_BASE, "ns/libns.so", "base");
    void *other = open_in(LM_ID_NEWLM, "ns/libns.so", "newlm");
    if (!base || !other) return 1;
    int (*bb)(void) = (int (*)(void))dlsym(base, "bump");
    int (*ob)(void) = (int (*)(void))dlsym(other, "bump");
    printf("same function: %s\n", bb == ob ? "yes" : "no");
    printf("base bump: %d %d\n", bb(), bb());
    printf("newlm bump: %d\n", ob());
    const char *(*more)(void) = (const char *(*)(void))dlsym(other, "load_more");
    printf("newlm load_more: %s\n", more());
    Lmid_t lm = -1;
    dlinfo(other, RTLD_DI_LMID, &lm);
    /* a bare name into that namespace, from the main program: found through
     * LD_LIBRARY_PATH */
    void *e = dlmopen(lm, "libnsenv.so", RTLD_NOW);
    printf("dlmopen(lm, libnsenv.so): %s\n", e ? "ok" : dlerror());
    void *e2 = dlmopen(lm, "libnsextra.so", RTLD_NOW | RTLD_NOLOAD);
    printf("libnsextra in new namespace: %s\n", e2 ? "yes" : "no");
    void *e3 = dlopen("libnsextra.so", RTLD_NOW | RTLD_NOLOAD);
    printf("libnsextra in base namespace: %s\n", e3 ? "yes" : "no");
    void *bad = dlmopen(lm, "libnsnothing.so", RTLD_NOW);
    printf("dlmopen(lm, libnsnothing.so): %s\n", bad ? "unexpectedly ok" : dlerror());
    dlclose(other);
    printf("closed the new namespace copy\n");
    printf("base bump: %d\n", bb());
    return 0;
}
