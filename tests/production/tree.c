/* Issue 11 item 7: a process tree. tree.c N forks N children; the even ones
   exec this program again (as a leaf), the odd ones stay forked; each makes
   one event. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "leaf") == 0) {
        dlopen("libcudnn_leaf.so.9", RTLD_NOW);
        return 0;
    }
    int n = argc > 1 ? atoi(argv[1]) : 4;
    dlopen("libcudnn_root.so.9", RTLD_NOW);
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p == 0) {
            if (i % 2 == 0) {
                execl("/proc/self/exe", argv[0], "leaf", (char *)NULL);
                _exit(126);
            }
            dlopen("libcudnn_forked.so.9", RTLD_NOW);
            _exit(0);
        }
        waitpid(p, NULL, 0);
    }
    printf("tree of %d done\n", n);
    return 0;
}
