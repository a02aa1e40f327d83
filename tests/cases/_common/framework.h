/* Helpers for the case programs (tests/cases/NN_slug/main.c), which play a
 * framework: they load cuDNN / CUDA the way it does and print its message.
 * The fake libraries' declarations are in tests/fixtures/stack/fake_api.h.
 */
#ifndef CASE_FRAMEWORK_H
#define CASE_FRAMEWORK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_api.h"

/* Output as it happens: the launcher keeps stderr, and a program that
 * aborts must not lose what it printed. */
static inline void case_unbuffered(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    setvbuf(stderr, NULL, _IONBF, 0);
}

/* dlsym that must succeed (a case program bug otherwise: exit 99). */
static inline void *case_sym(void *handle, const char *name)
{
    void *p = dlsym(handle, name);
    if (!p) {
        fprintf(stderr, "case program: no %s: %s\n", name, dlerror());
        exit(99);
    }
    return p;
}

/* An absolute path from one relative to the program's directory, as Python
 * builds the paths of site-packages from sys.executable ("../lib/…"). */
static inline const char *case_path(const char *rel)
{
    static char buf[8][4096];
    static int next;
    char *out = buf[next++ % 8];
    char exe[2048];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        exit(99);
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    while (strncmp(rel, "../", 3) == 0 && (slash = strrchr(exe, '/')) != NULL) {
        *slash = 0;
        rel += 3;
    }
    snprintf(out, sizeof buf[0], "%s/%s", exe, rel);
    return out;
}

/* Dies of SIGSEGV as a crash in native code does (Python's default). */
static inline void case_segfault(void)
{
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    _exit(139);
}

#endif
