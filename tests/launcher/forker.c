/* forker: fork; the child execs argv[1] with argv[1..]; the parent waits and
 * exits with the child's exit status (tests/launcher.rs). */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 2) {
        fprintf(stderr, "usage: forker PROGRAM [ARGS...]\n");
        return 2;
    }
    printf("forker: pid %d\n", (int)getpid());
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        execv(argv[1], argv + 1);
        perror("execv");
        _exit(127);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid) {
        perror("waitpid");
        return 1;
    }
    printf("forker: child %d exit %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
