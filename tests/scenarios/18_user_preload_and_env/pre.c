/* The user's own LD_PRELOAD library: overrides getenv for one variable and
 * says when its constructor runs. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
__attribute__((constructor)) static void pre_init(void) { printf("[userpre ctor]\n"); fflush(stdout); }
char *getenv(const char *name) {
    static char *(*real)(const char *);
    if (!real) real = (char *(*)(const char *))dlsym(RTLD_NEXT, "getenv");
    if (strcmp(name, "SCENARIO_GREETING") == 0) return (char *)"hello from userpre";
    return real(name);
}
