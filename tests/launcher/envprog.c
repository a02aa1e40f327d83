/* envprog: prints the loader variables it got and every distinct
 * libcdtrace.so (the shim) and libcdtrace_preload.so (its preload helper)
 * file mapped into it (from /proc/self/maps); exits with argv[1] (default 0)
 * (tests/launcher.rs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "(unset)";
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("LD_PRELOAD=%s\n", env("LD_PRELOAD"));
    printf("LD_AUDIT=%s\n", env("LD_AUDIT"));
    printf("LD_LIBRARY_PATH=%s\n", env("LD_LIBRARY_PATH"));
    FILE *maps = fopen("/proc/self/maps", "r");
    if (!maps) {
        perror("/proc/self/maps");
        return 1;
    }
    static char seen[2][32][4096];
    int n[2] = {0, 0};
    static const char *const names[2] = {"libcdtrace.so", "libcdtrace_preload.so"};
    char line[8192];
    while (fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (!path)
            continue;
        path[strcspn(path, "\n")] = '\0';
        const char *base = strrchr(path, '/') + 1;
        for (int k = 0; k < 2; k++) {
            if (strcmp(base, names[k]) != 0)
                continue;
            int dup = 0;
            for (int i = 0; i < n[k]; i++)
                dup |= strcmp(seen[k][i], path) == 0;
            if (!dup && n[k] < 32)
                snprintf(seen[k][n[k]++], sizeof seen[0][0], "%s", path);
        }
    }
    fclose(maps);
    printf("shim files mapped: %d\n", n[0]);
    for (int i = 0; i < n[0]; i++)
        printf("shim file: %s\n", seen[0][i]);
    printf("preload helper files mapped: %d\n", n[1]);
    for (int i = 0; i < n[1]; i++)
        printf("preload helper file: %s\n", seen[1][i]);
    return argc > 1 ? atoi(argv[1]) : 0;
}
