/* Issue 11 item 4: fill.c N1 FILLER N2 makes N1 events (failed loads of
   CUDA-family names, one event each), a forked child that makes N1 more,
   then removes FILLER (the test's file that helped fill the disk) and makes
   N2 events more. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void events(const char *who, int from, int n) {
    char name[64];
    for (int i = from; i < from + n; i++) {
        snprintf(name, sizeof name, "libcudnn_%s_%d.so.9", who, i);
        dlopen(name, RTLD_NOW);
    }
}
int main(int argc, char **argv) {
    if (argc != 4) return 2;
    int n1 = atoi(argv[1]), n2 = atoi(argv[3]);
    events("parent", 0, n1);
    pid_t p = fork();
    if (p == 0) {
        events("child", 0, n1);
        _exit(0);
    }
    int st;
    waitpid(p, &st, 0);
    if (unlink(argv[2]) != 0) perror("unlink");
    events("parent", n1, n2);
    printf("done, child %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "failed");
    return 0;
}
