/* Issue 11 item 1: the program closes every descriptor it did not open (a
   daemon, closefrom), then waits on stdin while the test replaces the trace
   file, then makes one more event. The shim must never write through what
   now sits at the trace file's path. */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
int main(void) {
    dlopen("libcudnn_before.so.9", RTLD_NOW); /* an event */
    for (int fd = 3; fd < 4096; fd++) close(fd);
    printf("closed %d\n", (int)getpid());
    fflush(stdout);
    char c;
    if (read(0, &c, 1) != 1) return 2;
    dlopen("libcudnn_after.so.9", RTLD_NOW); /* the shim must reopen */
    printf("done\n");
    return 0;
}
