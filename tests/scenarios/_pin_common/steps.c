/* A program that asks for cuDNN the way frameworks do, one step per argument,
 * and prints what it got. Used by several NN_pin_* scenarios (their
 * scenario.env lists the steps as `arg` lines).
 *
 *   open:NAME[:lazy|now][:global]
 *                    dlopen(NAME, RTLD_NOW|RTLD_LOCAL by default) from the
 *                    executable; prints the path of the handle, or dlerror().
 *                    The handle becomes the current one.
 *   try:NAME         dlopen(NAME, RTLD_NOW|RTLD_LOCAL); prints the path or
 *                    dlerror(); the current handle is unchanged.
 *   same:NAME        dlopen(NAME, RTLD_NOW|RTLD_LOCAL); prints whether it
 *                    returned the current handle.
 *   version          cudnnGetVersion() through dlsym(current handle)
 *   cudart           cudnnGetCudartVersion() through dlsym(current handle)
 *   own              fake_cudnn_sublib_version() of the current handle's
 *                    object (the dispatcher's own build)
 *   status:FN        FN(), a cudnnStatus_t (void), through the current handle
 *   list             every libcudnn* object in the process and its version
 *   variants:BASE:V  the cuDNN 9 name sequence BASE.so.V, BASE.so.<major.minor>,
 *                    BASE.so.<major>, BASE.so with version V (X.Y.Z), as
 *                    libcudnn_graph does for its optional engines: stops at
 *                    the first that loads; prints each dlerror()
 */
#include "pin_common.h"

static void *cur;

static void open_step(const char *spec)
{
    char name[1024];
    snprintf(name, sizeof name, "%s", spec);
    int flags = RTLD_NOW, global = 0;
    const char *fl = "RTLD_NOW";
    /* options after the name: ":lazy", ":now", ":global" (a path has no ':') */
    char *opt;
    while ((opt = strrchr(name, ':')) != NULL) {
        if (strcmp(opt, ":lazy") == 0)
            flags = RTLD_LAZY, fl = "RTLD_LAZY";
        else if (strcmp(opt, ":now") == 0)
            flags = RTLD_NOW, fl = "RTLD_NOW";
        else if (strcmp(opt, ":global") == 0)
            global = 1;
        else
            break;
        *opt = '\0';
    }
    void *h = dlopen(name, flags | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    printf("dlopen(%s, %s|%s): ", name, fl, global ? "RTLD_GLOBAL" : "RTLD_LOCAL");
    if (h) {
        printf("%s\n", handle_path(h));
        cur = h;
    } else {
        printf("failed: %s\n", dlerror());
    }
}

static void variants(const char *arg)
{
    char base[256];
    int M, m, p;
    const char *colon = strrchr(arg, ':');
    if (!colon || sscanf(colon + 1, "%d.%d.%d", &M, &m, &p) != 3) {
        printf("variants: bad argument %s\n", arg);
        return;
    }
    snprintf(base, sizeof base, "%.*s", (int)(colon - arg), arg);
    char names[4][300];
    snprintf(names[0], sizeof names[0], "%s.so.%d.%d.%d", base, M, m, p);
    snprintf(names[1], sizeof names[1], "%s.so.%d.%d", base, M, m);
    snprintf(names[2], sizeof names[2], "%s.so.%d", base, M);
    snprintf(names[3], sizeof names[3], "%s.so", base);
    for (int i = 0; i < 4; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            printf("  %s: %s\n", names[i], handle_path(h));
            return;
        }
        printf("  %s: %s\n", names[i], dlerror());
    }
    printf("  %s: none loaded\n", base);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "open:", 5) == 0) {
            open_step(a + 5);
        } else if (strncmp(a, "try:", 4) == 0) {
            void *h = dlopen(a + 4, RTLD_NOW | RTLD_LOCAL);
            printf("dlopen(%s): %s\n", a + 4, h ? handle_path(h) : dlerror());
        } else if (strncmp(a, "same:", 5) == 0) {
            void *h = dlopen(a + 5, RTLD_NOW | RTLD_LOCAL);
            if (!h)
                printf("dlopen(%s): failed: %s\n", a + 5, dlerror());
            else
                printf("dlopen(%s): %s, same handle: %s\n", a + 5, handle_path(h),
                       h == cur ? "yes" : "no");
        } else if (!cur && (strcmp(a, "version") == 0 || strcmp(a, "cudart") == 0 ||
                            strcmp(a, "own") == 0 || strncmp(a, "status:", 7) == 0)) {
            printf("%s: no handle\n", a);
        } else if (strcmp(a, "version") == 0) {
            call_version(cur, "cudnnGetVersion()");
        } else if (strcmp(a, "cudart") == 0) {
            size_t (*v)(void) = (size_t(*)(void))dlsym(cur, "cudnnGetCudartVersion");
            if (v)
                printf("cudnnGetCudartVersion() = %zu\n", v());
            else
                printf("cudnnGetCudartVersion: not found\n");
        } else if (strcmp(a, "own") == 0) {
            int (*own)(void) = (int (*)(void))dlsym(cur, "fake_cudnn_sublib_version");
            if (own)
                print_version("dispatcher's own version", own());
            else
                printf("fake_cudnn_sublib_version: not found\n");
        } else if (strncmp(a, "status:", 7) == 0) {
            call_status(cur, a + 7);
        } else if (strcmp(a, "list") == 0) {
            list_cudnn("main");
        } else if (strncmp(a, "variants:", 9) == 0) {
            printf("name variants of %s:\n", a + 9);
            variants(a + 9);
        } else {
            printf("unknown step %s\n", a);
            return 2;
        }
    }
    return 0;
}
