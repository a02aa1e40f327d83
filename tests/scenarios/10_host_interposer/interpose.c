/* The program's own interposer (DT_NEEDED of the executable, ahead of libc in
 * the lookup order): wraps dlopen and puts, forwarding with dlsym(RTLD_NEXT).
 * Its dlopen wrapper is the naive kind: the real dlopen sees *this* library
 * as the caller, so the executable's RUNPATH is not searched for bare names. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int wrapped;

void *dlopen(const char *name, int flags) {
    static void *(*real)(const char *, int);
    if (!real) real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    wrapped++;
    char buf[256];
    int n = snprintf(buf, sizeof buf, "[interposer] dlopen(%s)\n", name ? name : "NULL");
    write(1, buf, n);
    return real(name, flags);
}

int puts(const char *s) {
    static int (*real)(const char *);
    if (!real) real = (int (*)(const char *))dlsym(RTLD_NEXT, "puts");
    fputs("[interposer] ", stdout);
    return real(s);
}

int interposer_count(void) { return wrapped; }
