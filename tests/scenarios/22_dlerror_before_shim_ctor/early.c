#define _GNU_SOURCE /* RTLD_DEFAULT, RTLD_NEXT: glibc before 2.34 needs it */
#include <dlfcn.h>
#include <stdio.h>
/* Runs before any LD_PRELOAD constructor: the shim's hooks have resolved
   nothing yet, and resolving dlerror with dlsym now would clear the error. */
__attribute__((constructor)) static void early(void) {
    void *p = dlsym(RTLD_DEFAULT, "no_such_symbol_xyz");
    const char *e = dlerror();
    printf("early ctor: dlsym=%s dlerror=%s\n", p ? "found" : "NULL", e ? e : "(null)");
    void *h = dlopen("libcudnn_absent.so.9", RTLD_NOW);
    e = dlerror();
    printf("early ctor: dlopen=%s dlerror=%s\n", h ? "ok" : "NULL", e ? e : "(null)");
}
int early_linked(void) { return 1; }
