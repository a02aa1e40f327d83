#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
/* Thousands of short-lived threads that each make one (failing) CUDA-named
   dlopen. The shim's audit namespace has its own libc, which never sees the
   program's threads exit: anything kept per thread there would add up
   (it was 4 KB a thread; a thread's request state kept for its next
   dlopen is about 1 KB, freed when the preload helper reports the exit).
   The program checks its own memory: bare it grows by nothing, traced by
   under 200 KB. */
/* Its dlopen returns into the worker: the hook detours through main's _fini. */
static void *worker(void *arg) {
    (void)arg;
    void *volatile h = dlopen("/nonexistent/libcudnn_thread.so.9", RTLD_NOW);
    return h;
}
/* A tail call: dlopen returns straight into libc's thread start, which has
   no _fini to detour through; the outcome is judged when the thread exits. */
__attribute__((noinline)) static void *tail_worker(void *arg) {
    (void)arg;
    return dlopen("/nonexistent/libcudnn_tail.so.9", RTLD_NOW);
}
static long rss_kb(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
    fclose(f);
    return resident * 4;
}
int main(void) {
    for (int i = 0; i < 200; i++) { pthread_t t; pthread_create(&t, 0, worker, 0); pthread_join(t, 0); }
    long before = rss_kb();
    for (int i = 0; i < 4000; i++) {
        pthread_t t;
        pthread_create(&t, 0, i % 2 ? tail_worker : worker, 0);
        pthread_join(t, 0);
    }
    long grew = rss_kb() - before;
    printf("4000 threads: memory grew less than 1 MB: %s\n", grew < 1024 ? "yes" : "no");
    if (grew >= 1024) fprintf(stderr, "grew %ld kB\n", grew);
    return 0;
}
