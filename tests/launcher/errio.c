/* errio: the program's stderr under the launcher (tests/launcher.rs).
 *
 *   errio mix N       stderr: a partial line finished after a stdout write,
 *                     every byte value, one write(2) of N bytes, then a write
 *                     after stdout output, no final newline; stdout: 3 lines
 *   errio alternate N N times: "eI\n" to stderr, then "oI\n" to stdout
 *   errio tty         stdout: "isatty2=B rows=R cols=C"; stderr: bytes that
 *                     a terminal would process ("a\nb\r\nc\td\n", escapes)
 *   errio winsize     for each line read on stdin, prints "rows=R cols=C" of
 *                     fd 2 on stdout; exits at EOF
 *   errio fd2         stdout: what fd 2 is: "closed", or "type=T ino=I
 *                     rdev=M:N isatty=B" (T: fifo, sock, reg, chr, other)
 *   errio linger      forks a child that keeps stderr, closes stdout, waits
 *                     for a byte on stdin, writes "late\n" to stderr and
 *                     exits; the parent writes "early\n" to stderr, prints
 *                     the child's pid on stdout and exits 0 at once
 *   errio spew [ignore]
 *                     writes "spew\n" to stderr until a write fails; with
 *                     "ignore", SIGPIPE is ignored and it prints
 *                     "errno=EPIPE" (or the number) on stdout and exits 3
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static void write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(99);
        p += w;
        n -= (size_t)w;
    }
}

#define WRITE_LIT(fd, lit) write_all((fd), (lit), sizeof(lit) - 1)

static int mix(size_t n)
{
    WRITE_LIT(2, "partial line ");
    WRITE_LIT(1, "stdout 1\n");
    WRITE_LIT(2, "finished after stdout\n");
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    write_all(2, all, sizeof all);
    char *big = malloc(n ? n : 1);
    if (!big)
        return 98;
    for (size_t i = 0; i < n; i++)
        big[i] = (i % 64 == 63) ? '\n' : (char)('A' + (i / 64) % 26);
    /* One write(2) call: the relay must take it in pieces. */
    write_all(2, big, n);
    free(big);
    WRITE_LIT(1, "stdout 2\n");
    WRITE_LIT(2, "\nafter stdout 2\n");
    WRITE_LIT(1, "stdout 3\n");
    WRITE_LIT(2, "the end, no newline");
    return 0;
}

static int alternate(int n)
{
    char b[32];
    for (int i = 0; i < n; i++) {
        int k = snprintf(b, sizeof b, "e%d\n", i);
        write_all(2, b, (size_t)k);
        k = snprintf(b, sizeof b, "o%d\n", i);
        write_all(1, b, (size_t)k);
    }
    return 0;
}

static int tty(void)
{
    struct winsize ws = {0};
    ioctl(2, TIOCGWINSZ, &ws);
    printf("isatty2=%d rows=%d cols=%d\n", isatty(2), ws.ws_row, ws.ws_col);
    fflush(stdout);
    WRITE_LIT(2, "a\nb\r\nc\td\n\033[31mred\033[0m\n\xff\x01 end");
    return 0;
}

static int winsize(void)
{
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        struct winsize ws = {0};
        if (ioctl(2, TIOCGWINSZ, &ws) != 0)
            printf("TIOCGWINSZ failed: %s\n", strerror(errno));
        else
            printf("rows=%d cols=%d\n", ws.ws_row, ws.ws_col);
        fflush(stdout);
    }
    return 0;
}

static int fd2(void)
{
    struct stat st;
    if (fstat(2, &st) != 0) {
        printf("closed\n");
        return 0;
    }
    const char *t = S_ISFIFO(st.st_mode)  ? "fifo"
                    : S_ISSOCK(st.st_mode) ? "sock"
                    : S_ISREG(st.st_mode)  ? "reg"
                    : S_ISCHR(st.st_mode)  ? "chr"
                                           : "other";
    printf("type=%s ino=%llu rdev=%u:%u isatty=%d\n", t, (unsigned long long)st.st_ino,
           major(st.st_rdev), minor(st.st_rdev), isatty(2));
    return 0;
}

static int linger(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 97;
    if (pid == 0) {
        close(1);
        char c;
        while (read(0, &c, 1) < 0 && errno == EINTR) {
        }
        WRITE_LIT(2, "late\n");
        _exit(0);
    }
    WRITE_LIT(2, "early\n");
    printf("%d\n", (int)pid);
    fflush(stdout);
    return 0;
}

static int spew(int ignore)
{
    if (ignore)
        signal(SIGPIPE, SIG_IGN);
    for (;;) {
        ssize_t w = write(2, "spew\n", 5);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            if (errno == EPIPE)
                printf("errno=EPIPE\n");
            else
                printf("errno=%d\n", errno);
            return 3;
        }
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc >= 2 ? argv[1] : "";
    if (strcmp(mode, "mix") == 0 && argc >= 3)
        return mix((size_t)strtoull(argv[2], NULL, 10));
    if (strcmp(mode, "alternate") == 0 && argc >= 3)
        return alternate(atoi(argv[2]));
    if (strcmp(mode, "tty") == 0)
        return tty();
    if (strcmp(mode, "winsize") == 0)
        return winsize();
    if (strcmp(mode, "fd2") == 0)
        return fd2();
    if (strcmp(mode, "linger") == 0)
        return linger();
    if (strcmp(mode, "spew") == 0)
        return spew(argc >= 3 && strcmp(argv[2], "ignore") == 0);
    fprintf(stderr, "usage: errio mix N | alternate N | tty | winsize | fd2 | linger | spew [ignore]\n");
    return 2;
}
