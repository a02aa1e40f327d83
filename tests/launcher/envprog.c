/* envprog: prints the loader variables it got and every distinct
 * libcdtrace.so file mapped into it (from /proc/self/maps); exits with
 * argv[1] (default 0) (tests/launcher.rs). */
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
    static char seen[32][4096];
    int n = 0;
    char line[8192];
    while (fgets(line, sizeof line, maps)) {
        char *path = strchr(line, '/');
        if (!path)
            continue;
        path[strcspn(path, "\n")] = '\0';
        const char *base = strrchr(path, '/') + 1;
        if (strcmp(base, "libcdtrace.so") != 0)
            continue;
        int dup = 0;
        for (int i = 0; i < n; i++)
            dup |= strcmp(seen[i], path) == 0;
        if (!dup && n < 32)
            snprintf(seen[n++], sizeof seen[0], "%s", path);
    }
    fclose(maps);
    printf("shim files mapped: %d\n", n);
    for (int i = 0; i < n; i++)
        printf("shim file: %s\n", seen[i]);
    return argc > 1 ? atoi(argv[1]) : 0;
}
