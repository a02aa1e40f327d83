/* setenv_dlopen: changes LD_LIBRARY_PATH inside the running program, then
 * dlopens a library by name (tests/launcher.rs, issue 9 class 5).
 *
 *   setenv_dlopen VALUE NAME [ROUNDS [RACE]]
 *
 * VALUE: the new LD_LIBRARY_PATH ("-" leaves the environment alone, "!"
 * unsets it). glibc reads LD_LIBRARY_PATH once, at start-up, so the change
 * has no effect on the search: what Python's os.environ[...] = ... does
 * inside a process (lightning-pose#460, onnxruntime#25609).
 * NAME is dlopened ROUNDS times (default 1). With RACE set, a second thread
 * adds new variables to the environment while the main thread loads (each
 * addition may move glibc's environ array and free the old one): the shim
 * reads the program's environment at each request and must survive it.
 *
 * VALUE "@put:DIR" replaces the variable with putenv(3) and a buffer of the
 * program's own, "@unmapped" does so with a page it then unmaps (a program
 * that frees what it gave putenv, as CPython before 3.9 did): when the
 * variable was set at start-up, putenv rewrites that slot of the start-up
 * array in place, and the array then points at memory that is not the
 * loader's. The program never reads its environment again; the shim must
 * not fault on it either.
 *
 * Built twice: plain, and with -DUSE_ENVIRON, which reads `environ`
 * directly, so that the executable gets a copy relocation of it and libc's
 * own `__environ` is the executable's copy.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifdef USE_ENVIRON
extern char **environ;
#endif

static volatile int stop;

static void *adder(void *arg)
{
    (void)arg;
    char name[32];
    for (unsigned i = 0; !stop && i < 20000; i++) {
        snprintf(name, sizeof name, "CDT_RACE_%u", i);
        setenv(name, "x", 1);
        if (i % 64 == 63) {
            /* Start again from a small environment now and then, so that
             * the array is freed and reallocated over and over. */
            for (unsigned j = i - 63; j <= i; j++) {
                snprintf(name, sizeof name, "CDT_RACE_%u", j);
                unsetenv(name);
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 3) {
        fprintf(stderr, "usage: setenv_dlopen VALUE NAME [ROUNDS [RACE]]\n");
        return 2;
    }
    static char put[4096];
    if (strncmp(argv[1], "@put:", 5) == 0) {
        snprintf(put, sizeof put, "LD_LIBRARY_PATH=%s", argv[1] + 5);
        putenv(put);
    } else if (strcmp(argv[1], "@unmapped") == 0) {
        char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED)
            return 4;
        strcpy(page, "LD_LIBRARY_PATH=/cdt-gone");
        putenv(page);
        munmap(page, 4096);
    } else if (strcmp(argv[1], "!") == 0)
        unsetenv("LD_LIBRARY_PATH");
    else if (strcmp(argv[1], "-") != 0)
        setenv("LD_LIBRARY_PATH", argv[1], 1);
#ifdef USE_ENVIRON
    /* Not after "@unmapped": that entry now points at nothing. */
    unsigned n = 0;
    for (char **e = environ; *e && strcmp(argv[1], "@unmapped") != 0; e++)
        n += strncmp(*e, "LD_LIBRARY_PATH=", 16) == 0;
    printf("LD_LIBRARY_PATH entries in environ: %u\n", n);
#endif
    int rounds = argc > 3 ? atoi(argv[3]) : 1;
    pthread_t t;
    int race = argc > 4;
    if (race && pthread_create(&t, NULL, adder, NULL) != 0)
        return 3;
    int loaded = 0;
    for (int i = 0; i < rounds; i++) {
        void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            loaded++;
            dlclose(h);
        } else if (i == 0) {
            printf("dlopen(%s) failed: %s\n", argv[2], dlerror());
        }
    }
    if (race) {
        stop = 1;
        pthread_join(t, NULL);
    }
    printf("loaded %d of %d\n", loaded, rounds);
    return 0;
}
