/* The dispatcher (cuDNN 9 style): loads its sub-libraries lazily by bare
 * name, trying several name variants in turn, from its own code, so the
 * search uses *this* library's RUNPATH ($ORIGIN). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

const char *x_version(void) { return VERSION " (" WHERE ")"; }

static void load_sub(const char *sub) {
    static const char *suffix[] = {".so.9.1.0", ".so.9.1", ".so.9", ".so"};
    char tried[512] = "";
    char last_err[512] = "";
    for (unsigned i = 0; i < sizeof suffix / sizeof *suffix; i++) {
        char name[128], sym[128];
        snprintf(name, sizeof name, "libx_%s%s", sub, suffix[i]);
        strcat(tried, i ? ", " : "");
        strcat(tried, name);
        void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            snprintf(last_err, sizeof last_err, "%s", e ? e : "(null)");
            continue;
        }
        snprintf(sym, sizeof sym, "x_%s_version", sub);
        const char *(*ver)(void) = (const char *(*)(void))dlsym(h, sym);
        printf("  %-8s %-22s -> %s\n", sub, name, ver ? ver() : "(no version symbol)");
        return;
    }
    printf("  %-8s Unable to load any of {%s}\n", sub, tried);
    printf("  %-8s last dlerror: %s\n", "", last_err);
}

void x_init(void) {
    printf("dispatcher %s\n", x_version());
    load_sub("graph");
    load_sub("ops");
    load_sub("adv");
    load_sub("engines");
    load_sub("cnn");
}
