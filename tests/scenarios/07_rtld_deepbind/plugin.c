/* Built twice (libdeep.so opened RTLD_DEEPBIND, libshallow.so opened without).
 * Defines helper(), which the executable also defines and exports. */
#include <dlfcn.h>
#include <stdio.h>
const char *helper(void) { return "plugin's helper"; }
void run(const char *who) {
    printf("%s: helper() -> %s\n", who, helper());
    /* A bare-name dlopen from this library: uses its RUNPATH ($ORIGIN/sub).
     * From a DEEPBIND library the dlopen reference binds to libc's first,
     * bypassing any LD_PRELOAD interposer. */
    void *h = dlopen(DEP, RTLD_NOW);
    if (!h) { printf("%s: dlopen(%s): %s\n", who, DEP, dlerror()); return; }
    const char *(*dep)(void) = (const char *(*)(void))dlsym(h, "dep_name");
    printf("%s: dlopen(%s): %s\n", who, DEP, dep ? dep() : "(no dep_name)");
    void *bad = dlopen("libnot-there-" DEP, RTLD_NOW);
    printf("%s: failing dlopen: %s\n", who, bad ? "unexpectedly ok" : dlerror());
}
