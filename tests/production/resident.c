/* resident: prints what is resident of the shim's namespace once start-up is
   over, then loads a cuDNN and asks its version (the shim must still record
   it after giving its pages back). Used by production.rs.

   Output: one line per executable mapping of libcdtrace.so and of libc,
   "NAME KB_SIZE KB_RSS" (NAME libcdtrace.so or libc), then "version N". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static void show_executable_mappings(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[4096], name[4096] = "";
    unsigned long lo, hi, kb;
    int exec = 0;
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char perms[8];
        int n = 0;
        if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &n) == 3 && n > 0) {
            const char *slash = strrchr(line, '/');
            snprintf(name, sizeof name, "%s", slash ? slash + 1 : "");
            name[strcspn(name, "\n")] = 0;
            /* glibc before 2.34 maps libc as libc-2.NN.so. */
            if (!strcmp(name, "libc.so.6") || (!strncmp(name, "libc-", 5) && strstr(name, ".so")))
                strcpy(name, "libc");
            exec = perms[2] == 'x' && (!strcmp(name, "libcdtrace.so") || !strcmp(name, "libc"));
            continue;
        }
        if (exec && sscanf(line, "Rss: %lu kB", &kb) == 1)
            printf("%s %lu %lu\n", name, (hi - lo) / 1024, kb);
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    show_executable_mappings();
    fflush(stdout);
    void *h = dlopen(argc > 1 ? argv[1] : "libcudnn.so.9", RTLD_NOW);
    int (*version)(void) = h ? (int (*)(void))dlsym(h, "cudnnGetVersion") : 0;
    printf("version %d\n", version ? version() : -1);
    return 0;
}
