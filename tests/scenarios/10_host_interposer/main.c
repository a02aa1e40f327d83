#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int interposer_count(void);

static const char *base(const char *p) { const char *s = strrchr(p, '/'); return s ? s + 1 : p; }

static void try_open(const char *name) {
    void *h = dlopen(name, RTLD_NOW);
    if (!h) { printf("dlopen(%s): %s\n", name, dlerror()); return; }
    const char *(*f)(void) = (const char *(*)(void))dlsym(h, "plug_name");
    printf("dlopen(%s): %s\n", name, f ? f() : "(no plug_name)");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    puts("hello through puts");
    /* Only in the executable's RUNPATH: the interposer's real dlopen call has
     * the interposer as caller, so this fails. */
    try_open("libplug_runpath.so");
    /* In LD_LIBRARY_PATH: found whoever the caller is. */
    try_open("libplug_env.so");
    /* By path. */
    try_open("plugins/libplug_path.so");
    /* RTLD_NEXT from the executable: where does the next "puts" live, and does
     * calling it go through the interposer? */
    int (*next_puts)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "puts");
    Dl_info info;
    printf("dlsym(RTLD_NEXT, puts) in %s\n",
           next_puts && dladdr((void *)next_puts, &info) ? base(info.dli_fname) : "?");
    next_puts("via RTLD_NEXT puts");
    /* dlsym(RTLD_NEXT, "dlopen") from the executable, then call it: the
     * interposer must still see the call. */
    void *(*next_dlopen)(const char *, int) = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    int before = interposer_count();
    void *h = next_dlopen("plugins/libplug_path.so", RTLD_NOW);
    printf("RTLD_NEXT dlopen: %s, interposer calls +%d\n", h ? "ok" : "failed", interposer_count() - before);
    /* RTLD_DEFAULT finds the interposer's dlopen (first in the global scope
     * after the executable, unless something is preloaded). */
    void *(*def_dlopen)(const char *, int) = (void *(*)(const char *, int))dlsym(RTLD_DEFAULT, "dlopen");
    before = interposer_count();
    h = def_dlopen("libplug_env.so", RTLD_NOW);
    printf("RTLD_DEFAULT dlopen: %s, interposer calls +%d\n", h ? "ok" : "failed", interposer_count() - before);
    printf("interposer saw %d dlopen calls\n", interposer_count());
    return 0;
}
