/* Issue 11 item 9: the program changes directory, then forks a child that
   makes an event: a relative CUDNN_TRACE_DIR must still mean the directory
   it meant when the program started. */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
    if (chdir("/") != 0) return 2;
    pid_t p = fork();
    if (p == 0) {
        dlopen("libcudnn_child.so.9", RTLD_NOW);
        _exit(0);
    }
    waitpid(p, NULL, 0);
    dlopen("libcudnn_parent.so.9", RTLD_NOW);
    printf("child %d\n", (int)p);
    return 0;
}
