/* What a traced program could notice of calls made behind its back (issue 14):
 * prints one line per fact, for the scenario's stdout comparison.
 *   - the fake driver's log ($FAKE_CUDA_LOG: `ctor`, `cuInit`,
 *     `cuDriverGetVersion` lines, see tests/fixtures/stack/cuda_driver.c);
 *   - whether libcuda.so.1 is in the process (RTLD_NOLOAD), and how often
 *     cuInit ran;
 *   - how many threads the process has (/proc/self/task).
 * Not a scenario (no build.sh): included by scenarios' programs. */
#ifndef OBSERVE_H
#define OBSERVE_H

#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Starts with an empty driver log (both runs share the build directory). */
static void observe_reset(void)
{
    const char *log = getenv("FAKE_CUDA_LOG");
    if (log)
        unlink(log);
}

static int observe_threads(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void observe(const char *when)
{
    printf("[%s] threads=%d", when, observe_threads());
    void *drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (drv) {
        int (*inits)(void) = (int (*)(void))dlsym(drv, "fake_cuda_init_calls");
        printf(" libcuda=loaded cuInit-calls=%d", inits ? inits() : -1);
        dlclose(drv);
    } else {
        printf(" libcuda=absent");
    }
    printf(" driver-log={");
    const char *log = getenv("FAKE_CUDA_LOG");
    FILE *f = log ? fopen(log, "r") : NULL;
    char line[128];
    int first = 1;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        printf("%s%s", first ? "" : ",", line);
        first = 0;
    }
    if (f)
        fclose(f);
    printf("}\n");
}

#endif
