/* A call made in a loop must not cost an event (a system call) each time:
 * the first few are events, the rest a count written at exit. A forked
 * child counts its own calls from 1. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    size_t sum = 0;
    for (int i = 0; i < 1000; i++)
        sum += cudnnGetVersion();
    printf("1000 x cudnnGetVersion(): sum %zu\n", sum);
    for (int i = 0; i < 6; i++)
        sum = cudnnGetMaxDeviceVersion();
    printf("6 x cudnnGetMaxDeviceVersion() = %zu\n", sum);
    pid_t pid = fork();
    if (pid == 0) {
        printf("child: cudnnGetMaxDeviceVersion() = %zu\n", cudnnGetMaxDeviceVersion());
        return 0;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
