/* ttyinfo: what a program sees of its terminal (tests/terminal.rs).
 *
 * Prints one line on stdout:
 *   "tty0=N tty1=N tty2=N ctty=N devtty=B fg=B rows=R cols=C"
 * where N is the ttyname of that descriptor ("-" when it is no terminal),
 * ctty the name of the one of them that is the controlling terminal (the
 * device of /proc/self/stat's tty_nr; "-" for none of them), devtty=1 when
 * /dev/tty can be opened, fg=1 when the process group of the process is the
 * foreground one of its controlling terminal (tcgetpgrp(0) == getpgrp()),
 * and R, C the window size of fd 1.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *name(int fd)
{
    const char *n = isatty(fd) ? ttyname(fd) : NULL;
    return n ? n : "-";
}

/* tty_nr, field 7 of /proc/self/stat (after the parenthesised name). */
static unsigned long ctty_device(void)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    unsigned long tty = 0;
    if (p && sscanf(p + 1, " %*c %*d %*d %*d %lu", &tty) != 1)
        tty = 0;
    return tty;
}

int main(void)
{
    char t[3][64], ctty[64] = "-";
    unsigned long dev = ctty_device();
    for (int fd = 0; fd < 3; fd++) {
        snprintf(t[fd], sizeof t[fd], "%s", name(fd));
        struct stat st;
        if (dev && isatty(fd) && fstat(fd, &st) == 0 && st.st_rdev == dev)
            snprintf(ctty, sizeof ctty, "%s", t[fd]);
    }
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY);
    if (fd >= 0)
        close(fd);
    struct winsize ws = {0};
    ioctl(1, TIOCGWINSZ, &ws);
    printf("tty0=%s tty1=%s tty2=%s ctty=%s devtty=%d fg=%d rows=%d cols=%d\n", t[0], t[1], t[2],
           ctty, fd >= 0, tcgetpgrp(0) == getpgrp(), ws.ws_row, ws.ws_col);
    return 0;
}
