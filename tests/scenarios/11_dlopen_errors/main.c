#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static void try_open(const char *name, int flags) {
    errno = 0;
    void *h = dlopen(name, flags);
    int e = errno;
    if (h) { printf("dlopen(%s): ok\n", name); return; }
    const char *msg = dlerror();
    int e2 = errno;
    printf("dlopen(%s): NULL, errno %d (%s)\n  dlerror: %s\n  errno after dlerror: %d\n",
           name, e, e ? strerror(e) : "0", msg ? msg : "(null)", e2);
    const char *again = dlerror();
    printf("  dlerror again: %s\n", again ? again : "(null)");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    try_open("libdoes-not-exist.so.1", RTLD_NOW);         /* not found anywhere */
    try_open("/nonexistent/dir/libabs.so", RTLD_NOW);     /* absolute, missing */
    try_open("lib/libmissingdep.so", RTLD_NOW);           /* its DT_NEEDED is missing */
    try_open("lib/libnotelf.so", RTLD_NOW);               /* not an ELF file */
    try_open("lib/libundef.so", RTLD_NOW);                /* unresolved symbol, RTLD_NOW */
    try_open("lib/libundef.so", RTLD_LAZY);               /* ... but fine lazily */
    try_open("libwrongclass.so", RTLD_NOW);               /* 32-bit copy first on LD_LIBRARY_PATH is skipped */
    try_open("lib/libwrongclass.so", RTLD_NOW);            /* ... and fails by path */
    try_open("libgood.so", RTLD_NOW | RTLD_NOLOAD);       /* NOLOAD of something not loaded */
    /* dlsym failures and an untouched error state */
    void *h = dlopen("libgood.so", RTLD_NOW);
    printf("dlopen(libgood.so): %s\n", h ? "ok" : dlerror());
    void *s = dlsym(h, "no_such_symbol");
    const char *m = dlerror();
    printf("dlsym(no_such_symbol): %s, dlerror: %s\n", s ? "found" : "NULL", m ? m : "(null)");
    m = dlerror();
    printf("dlerror with nothing pending: %s\n", m ? m : "(null)");
    /* An error left pending across a successful dlopen: the success clears it? */
    dlopen("libdoes-not-exist.so.2", RTLD_NOW);
    void *ok = dlopen("libgood.so", RTLD_NOW);
    m = dlerror();
    printf("pending error after a successful dlopen: %s (%s)\n", m ? m : "(null)", ok ? "ok" : "failed");
    return 0;
}
