/* memprobe: a small program that stops at a pause point so that its memory
 * can be read from /proc. It prints "ready PID" once started (the shim, when
 * present, is loaded and initialised by then), then waits for stdin to close. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    char c;
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    while (read(0, &c, 1) > 0)
        ;
    return 0;
}
