#include <dlfcn.h>
#include <stdio.h>

void a(void);

static void open_and_call(const char *name, const char *fn) {
    void *h = dlopen(name, RTLD_NOW);
    if (!h) {
        printf("dlopen(%s): %s\n", name, dlerror());
        return;
    }
    printf("dlopen(%s): ok, calling %s\n", name, fn);
    ((void (*)(void))dlsym(h, fn))();
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    /* Start-up chain: exe (RPATH $ORIGIN/e) -> liba -> libb -> libc_
     * libc_ lives only in e/, found through the executable's RPATH while
     * loading libb's DT_NEEDED (libb and liba have no RPATH). */
    printf("startup chain:\n");
    a();
    /* dlopen chain: libp (RPATH $ORIGIN/x:$ORIGIN/y:$ORIGIN/z) -> libq (x/,
     * no RPATH) -> libr (y/, no RPATH) -> libs (z/, no RPATH): libr and libs
     * are found through the RPATH of their loader's loader(s). */
    open_and_call("p/libp.so", "p");
    /* Same chain, but libt2 has a RUNPATH: for its DT_NEEDED the whole RPATH
     * chain (loaders and executable) is skipped, so libu2 (in z/ and e/) is
     * not found. */
    open_and_call("p/libt.so", "t");
    return 0;
}
