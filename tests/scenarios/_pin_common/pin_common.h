/* Shared by the NN_pin_* scenarios (this directory is not a scenario: it has
 * no build.sh / scenario.env). Helpers that print what the process really
 * got, with no addresses and no pids:
 *
 *   handle_path(h)       the path the loader gave a handle (its l_name)
 *   print_version(l, v)  "l = 91900 (9.19.0)"
 *   list_cudnn(who)      every libcudnn* object in the process, in load
 *                        order, with its own version (the fake libraries'
 *                        fake_cudnn_sublib_version, tests/fixtures/README.md)
 *   call_status(h, fn)   calls a cudnnStatus_t (void) function found with
 *                        dlsym(h, fn) and prints its status name
 *
 * Build with -I tests/fixtures/stack (fake_api.h) and -ldl.
 */
#ifndef PIN_COMMON_H
#define PIN_COMMON_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_api.h"

static const char *pc_base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* cuDNN 9 encodes versions as M*10000+m*100+p, cuDNN 8 as M*1000+m*100+p. */
static void pc_fmt_version(long v, char *buf, size_t n)
{
    if (v >= 10000)
        snprintf(buf, n, "%ld.%ld.%ld", v / 10000, v / 100 % 100, v % 100);
    else
        snprintf(buf, n, "%ld.%ld.%ld", v / 1000, v / 100 % 10, v % 100);
}

static void print_version(const char *label, long v)
{
    char buf[64];
    pc_fmt_version(v, buf, sizeof buf);
    printf("%s = %ld (%s)\n", label, v, buf);
}

static const char *handle_path(void *h)
{
    struct link_map *m = NULL;
    if (!h || dlinfo(h, RTLD_DI_LINKMAP, &m) != 0 || !m)
        return "?";
    return m->l_name;
}

#define PC_MAX 64
struct pc_list {
    int n;
    char name[PC_MAX][512];
};

static int pc_collect(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct pc_list *l = data;
    if (strncmp(pc_base(info->dlpi_name), "libcudnn", 8) == 0 && l->n < PC_MAX)
        snprintf(l->name[l->n++], sizeof l->name[0], "%s", info->dlpi_name);
    return 0;
}

/* Lists the cuDNN objects; the versions are read after dl_iterate_phdr
 * returns (no dlopen inside its callback). The NOLOAD dlopen names the
 * object by its own l_name, so it is served by that object. */
static void list_cudnn(const char *who)
{
    static struct pc_list l;
    l.n = 0;
    dl_iterate_phdr(pc_collect, &l);
    printf("%s: cuDNN objects in the process:\n", who);
    for (int i = 0; i < l.n; i++) {
        char ver[64] = "?";
        void *h = dlopen(l.name[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            int (*own)(void) = (int (*)(void))dlsym(h, "fake_cudnn_sublib_version");
            if (own)
                pc_fmt_version(own(), ver, sizeof ver);
            dlclose(h);
        }
        printf("  %s (%s)\n", l.name[i], ver);
    }
}

/* Calls `fn`, a cudnnStatus_t (void) of handle h, and prints the status by
 * the library's own cudnnGetErrorString. */
static void call_status(void *h, const char *fn)
{
    cudnnStatus_t (*f)(void) = (cudnnStatus_t(*)(void))dlsym(h, fn);
    const char *(*str)(cudnnStatus_t) =
        (const char *(*)(cudnnStatus_t))dlsym(h, "cudnnGetErrorString");
    if (!f || !str) {
        printf("%s: not found\n", fn);
        return;
    }
    cudnnStatus_t st = f();
    printf("%s() = %d (%s)\n", fn, (int)st, str(st));
}

/* cudnnGetVersion through handle h. */
static void call_version(void *h, const char *label)
{
    size_t (*v)(void) = (size_t(*)(void))dlsym(h, "cudnnGetVersion");
    if (!v) {
        printf("%s: cudnnGetVersion not found\n", label);
        return;
    }
    print_version(label, (long)v());
}

#endif
