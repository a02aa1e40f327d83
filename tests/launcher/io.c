/* io: output and termination passthrough (tests/launcher.rs).
 *
 *   io exit N   writes a fixed mix to stdout and stderr (a 64 KiB block,
 *               bytes that are not UTF-8, a NUL, no final newline), exits N
 *   io segv     writes the same, then dies of SIGSEGV (no core file)
 *   io cat      copies stdin to stdout, exits 0
 *   io sigs     prints the signals it inherited as ignored, then those it
 *               inherited blocked ("ignored: 1 3 13\nblocked: 12\n"), exits 0
 *   io env      prints its environment, an entry a line, in order
 *   io odd-env PROGRAM ARGS...
 *               runs PROGRAM with its own environment plus an entry without
 *               `=` and a variable set twice, as a shell cannot make them
 *
 * Built dynamically and with -static from the same source.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

extern char **environ;

static void write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            _exit(99);
        p += w;
        n -= (size_t)w;
    }
}

/* A string literal, without its terminating NUL (it may hold a NUL itself). */
#define WRITE_LIT(fd, lit) write_all((fd), (lit), sizeof(lit) - 1)

static void mix(void)
{
    static char block[64 * 1024];
    for (size_t i = 0; i < sizeof block; i++)
        block[i] = (char)('a' + i % 26);
    WRITE_LIT(1, "stdout: start\n");
    WRITE_LIT(2, "stderr: start\n");
    write_all(1, block, sizeof block);
    WRITE_LIT(2, "stderr: \xff\xfe raw \x01 bytes\n");
    WRITE_LIT(1, "\nstdout: \xc3\x28 bad utf-8, a NUL \0 and no final newline");
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "exit") == 0) {
        mix();
        return atoi(argv[2]);
    }
    if (argc >= 2 && strcmp(argv[1], "segv") == 0) {
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        mix();
        *(volatile int *)0 = 1; /* a real fault, not raise() */
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "cat") == 0) {
        char buf[4096];
        ssize_t n;
        while ((n = read(0, buf, sizeof buf)) > 0)
            write_all(1, buf, (size_t)n);
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "sigs") == 0) {
        sigset_t blocked;
        sigprocmask(SIG_BLOCK, NULL, &blocked);
        printf("ignored:");
        for (int sig = 1; sig < 32; sig++) {
            struct sigaction sa;
            if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
                printf(" %d", sig);
        }
        printf("\nblocked:");
        for (int sig = 1; sig < 32; sig++)
            if (sigismember(&blocked, sig) == 1)
                printf(" %d", sig);
        printf("\n");
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "env") == 0) {
        for (char **e = environ; *e; e++)
            printf("%s\n", *e);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "odd-env") == 0) {
        size_t n = 0;
        while (environ[n])
            n++;
        char **env = calloc(n + 4, sizeof *env);
        env[0] = "CDT_ODD_ENTRY_WITHOUT_EQUALS";
        env[1] = "CDT_TWICE=first";
        memcpy(env + 2, environ, n * sizeof *env);
        env[n + 2] = "CDT_TWICE=second";
        execve(argv[2], argv + 2, env);
        perror("execve");
        return 127;
    }
    fprintf(stderr, "usage: io exit N | io segv | io cat | io sigs | io env | io odd-env PROGRAM...\n");
    return 2;
}
