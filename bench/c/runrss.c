/* runrss OUTFILE PROGRAM [ARGS...]: runs PROGRAM and writes its peak resident
 * set to OUTFILE as "maxrss_kb=N", exiting with PROGRAM's status.
 *
 * Why not the harness's own wait4: Linux keeps a process's peak RSS across
 * exec, and a child that Python vforks or forks starts out with Python's
 * memory counted (tens of MB), which would hide a small report's peak. The
 * program here is forked from this small process, so its figure is its own.
 * (GNU time does the same; this avoids depending on the `time` package.) */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: runrss OUTFILE PROGRAM [ARGS...]\n");
        return 2;
    }
    pid_t pid = fork();
    if (pid < 0) {
        perror("runrss: fork");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        perror("runrss: exec");
        _exit(127);
    }
    int status;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) {
        perror("runrss: wait4");
        return 2;
    }
    FILE *f = fopen(argv[1], "w");
    if (!f || fprintf(f, "maxrss_kb=%ld\n", ru.ru_maxrss) < 0 || fclose(f)) {
        perror("runrss: OUTFILE");
        return 2;
    }
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
