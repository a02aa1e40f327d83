/* The shim under load (issue 11): stress.c LIBDIR THREADS ITER FORKS.
   THREADS threads each dlopen and dlclose their own CUDA-family library
   (LIBDIR/libcudnn_stress_<i>.so.9) ITER times, while the main thread forks
   FORKS children one after another. The even ones exec this program as a
   leaf (`stress.c LIBDIR leaf`), which opens and closes a library 5 times.
   The odd ones stay forked and ask 5 times for a library that does not
   exist: a forked child of a multi-threaded process must not map or unmap
   a library, because glibc does not reset its loader's write lock in the
   child (posix/fork.c resets dl_load_lock and dl_load_tls_lock only), and a
   thread of the parent may have held it in dlclose at the moment of fork:
   the child would hang in its first dlopen, traced or not. A failed search
   takes only the locks fork resets. Before glibc 2.34 even that fails (the
   child finds the namespace's r_state of a parent thread's dlopen and
   asserts in _dl_open, traced or not), so there the threads hold a read lock
   around each loader call and the main thread forks under the write lock,
   as a program that forks while it loads libraries must. */
#define _GNU_SOURCE /* pthread_rwlockattr_setkind_np */
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *libdir;
static int iterations;
static int sync_forks;
static pthread_rwlock_t fork_lock;

static void cycle(int lib, int n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/libcudnn_stress_%d.so.9", libdir, lib);
    for (int i = 0; i < n; i++) {
        if (sync_forks) pthread_rwlock_rdlock(&fork_lock);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
            exit(3);
        }
        if (sync_forks) pthread_rwlock_unlock(&fork_lock);
        if (sync_forks) pthread_rwlock_rdlock(&fork_lock);
        dlclose(h);
        if (sync_forks) pthread_rwlock_unlock(&fork_lock);
    }
}

static void *worker(void *arg) {
    cycle((int)(long)arg, iterations);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[2], "leaf") == 0) {
        libdir = argv[1];
        cycle(0, 5);
        return 0;
    }
    if (argc != 5) return 2;
    libdir = argv[1];
    int major = 0, minor = 0;
    sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor);
    sync_forks = major == 2 && minor < 34;
    /* The forking thread must not starve behind the readers. */
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&fork_lock, &attr);
    int threads = atoi(argv[2]);
    iterations = atoi(argv[3]);
    int forks = atoi(argv[4]);
    pthread_t t[256];
    if (threads > 256) threads = 256;
    for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, (void *)(long)i);
    int failed = 0;
    for (int i = 0; i < forks; i++) {
        if (sync_forks) pthread_rwlock_wrlock(&fork_lock);
        pid_t p = fork();
        if (sync_forks) pthread_rwlock_unlock(&fork_lock);
        if (p == 0) {
            if (i % 2 == 0) {
                execl("/proc/self/exe", argv[0], libdir, "leaf", (char *)NULL);
                _exit(126);
            }
            char missing[4096];
            snprintf(missing, sizeof missing, "%s/libcudnn_stress_missing.so.9", libdir);
            for (int k = 0; k < 5; k++)
                if (dlopen(missing, RTLD_NOW)) _exit(4);
            _exit(0);
        }
        int st;
        if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) failed++;
    }
    for (int i = 0; i < threads; i++) pthread_join(t[i], NULL);
    printf("threads done, %d of %d children failed\n", failed, forks);
    return 0;
}
