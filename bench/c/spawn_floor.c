/* spawn_floor PROGRAM [ARGS...]: the least a launcher can be. Starts PROGRAM
 * with this process's environment as the launcher starts a program (a child
 * sharing its memory, CLONE_VM|CLONE_VFORK, through glibc's vfork), waits for
 * it and exits with its status. Nothing else: no option parsing, no run
 * directory, no record, no signal forwarding, no summary.
 *
 * Built statically with glibc, as the release launcher is, so that it pays
 * the same start (glibc's cpuid probe of the cache sizes, which this VM traps;
 * the static-pie relocation it does not have). Run with the shim's
 * environment, it measures what any launcher that is a process of its own
 * costs a traced program on this machine: bench/tools/suite.py's start-up
 * section compares `cudnn-trace` with it, so that the launcher's own work is
 * told apart from what no launcher process can avoid (issue 10). */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: spawn_floor PROGRAM [ARGS...]\n");
        return 2;
    }
    pid_t pid = vfork();
    if (pid < 0) {
        perror("spawn_floor: vfork");
        return 2;
    }
    if (pid == 0) {
        execve(argv[1], argv + 1, environ);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
