#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static void open_(const char *name) {
    void *h = dlopen(name, RTLD_NOW);
    if (!h) { printf("dlopen(%s): %s\n", name, dlerror()); return; }
    printf("dlopen(%s): %s\n", name, ((const char *(*)(void))dlsym(h, "lib_where"))());
}
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *g = getenv("SCENARIO_GREETING");
    printf("greeting: %s\n", g ? g : "(unset)");
    /* LD_LIBRARY_PATH="envdir::rel" : a relative entry, and an empty entry
     * (= the current directory) */
    open_("libinenv.so");   /* in envdir/ (relative entry) */
    open_("libincwd.so");   /* in the build dir = cwd (empty entry) */
    open_("libinrel.so");   /* in rel/ */
    return 0;
}
