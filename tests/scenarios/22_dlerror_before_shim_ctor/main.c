#define _GNU_SOURCE /* RTLD_DEFAULT, RTLD_NEXT: glibc before 2.34 needs it */
#include <dlfcn.h>
#include <stdio.h>
int early_linked(void);
int main(void) {
    void *p = dlsym(RTLD_DEFAULT, "nope2");
    const char *e = dlerror();
    printf("main: dlsym=%s dlerror=%s linked=%d\n", p ? "found" : "NULL", e ? e : "(null)", early_linked());
    printf("main: dlerror again=%s\n", dlerror() ? "text" : "(null)");
    return 0;
}
