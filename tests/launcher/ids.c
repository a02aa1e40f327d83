/* ids: what a setuid program sees (tests/launcher.rs). Prints its real and
 * effective uid, whether the kernel asked for secure execution (AT_SECURE)
 * and the LD_PRELOAD it got; exits with argv[1] (default 0). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *pre = getenv("LD_PRELOAD");
    printf("uid=%d euid=%d secure=%lu\n", (int)getuid(), (int)geteuid(),
           getauxval(AT_SECURE));
    printf("LD_PRELOAD=%s\n", pre ? pre : "(unset)");
    return argc > 1 ? atoi(argv[1]) : 0;
}
