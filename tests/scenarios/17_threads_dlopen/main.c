#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define N 8
static int results[2][N];

static void *worker(void *arg) {
    long t = (long)arg;
    for (int i = 0; i < N; i++) {
        char name[64];
        snprintf(name, sizeof name, "libt%ld_%d.so", t, i);
        void *h = dlopen(name, RTLD_NOW);
        int (*f)(void) = h ? (int (*)(void))dlsym(h, "lib_value") : NULL;
        results[t][i] = f ? f() : -1;
        if (i % 3 == 2) { /* a failure now and then, from both threads */
            snprintf(name, sizeof name, "libt%ld_missing%d.so", t, i);
            results[t][i] += dlopen(name, RTLD_NOW) ? 1000 : 0;
        }
    }
    return NULL;
}

int main(void) {
    pthread_t th[2];
    for (long t = 0; t < 2; t++) pthread_create(&th[t], NULL, worker, (void *)t);
    for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < 2; t++) {
        printf("thread %d:", t);
        for (int i = 0; i < N; i++) printf(" %d", results[t][i]);
        printf("\n");
    }
    return 0;
}
