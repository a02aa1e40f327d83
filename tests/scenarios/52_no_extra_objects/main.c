/* Issue 14, item 2: the shim adds nothing to the program's link map but
 * itself. The program lists what it can see of its own process, the way a
 * program (or a library probing for a runtime) would: every object in its
 * namespace (dl_iterate_phdr, the shim's own files left out) and RTLD_NOLOAD
 * probes for the libraries a Rust shim could drag in (libgcc_s for
 * unwinding; libpthread, libdl, librt, libutil, libm: DT_NEEDED of Rust's
 * std when it is built against glibc older than 2.34). Untraced none of
 * them is there; traced, none may be. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static int list(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size, (void)data;
    const char *name = info->dlpi_name;
    if (strstr(name, "cdtrace")) /* the shim itself may be there */
        return 0;
    if (!*name)
        name = "(main program)";
    else if (strncmp(name, "linux-vdso", 10) == 0)
        name = "(vdso)";
    printf("object %s\n", name);
    return 0;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    dl_iterate_phdr(list, NULL);
    static const char *const probes[] = {
        "libgcc_s.so.1", "libpthread.so.0", "libdl.so.2", "librt.so.1",
        "libutil.so.1",  "libm.so.6",       "libstdc++.so.6",
    };
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        void *h = dlopen(probes[i], RTLD_LAZY | RTLD_NOLOAD);
        printf("%s: %s\n", probes[i], h ? "loaded" : "not loaded");
        if (h)
            dlclose(h);
    }
    return 0;
}
