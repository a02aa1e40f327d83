/* caches WORK A B: what the shim caches per process (its pid and tid, each
   file's identity and build-id) stays right in every kind of child.

   WORK starts as a copy of A. The parent opens WORK, then:
   - a fork child replaces WORK with B (a new inode) and opens it, then
     rewrites WORK in place with A's bytes (same inode, new time stamps) and
     opens it again;
   - a child of the raw clone system call (no fork handler runs) opens WORK;
   - a vfork child execs this program as "caches --exec WORK", which opens
     WORK once;
   and the parent opens WORK once more. Each child's pid is printed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void open_close(const char *path)
{
    void *h = dlopen(path, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
        _exit(3);
    }
    dlclose(h);
}

static void copy_in_place(const char *from, const char *to)
{
    static char buf[1 << 20];
    int in = open(from, O_RDONLY);
    ssize_t n = read(in, buf, sizeof buf);
    close(in);
    int out = open(to, O_WRONLY | O_TRUNC | O_CREAT, 0755);
    if (n <= 0 || out < 0 || write(out, buf, n) != n) {
        perror("copy");
        _exit(4);
    }
    close(out);
}

static void wait_ok(pid_t p, const char *what)
{
    int st = 0;
    if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "%s child failed\n", what);
        exit(1);
    }
    printf("%s %d\n", what, (int)p);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--exec") == 0) {
        open_close(argv[2]);
        return 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: caches WORK A B\n");
        return 2;
    }
    const char *work = argv[1], *a = argv[2], *b = argv[3];
    open_close(work);

    pid_t p = fork();
    if (p == 0) {
        char tmp[4096];
        snprintf(tmp, sizeof tmp, "%s.new", work);
        copy_in_place(b, tmp);
        if (rename(tmp, work) != 0) _exit(5);
        open_close(work);
        /* File times are kept at the kernel's clock tick (a few ms): a
           rewrite in the same tick with the same size would look unchanged. */
        usleep(50 * 1000);
        copy_in_place(a, work);
        open_close(work);
        _exit(0);
    }
    wait_ok(p, "fork");

    p = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (p == 0) {
        open_close(work);
        syscall(SYS_exit_group, 0);
    }
    wait_ok(p, "clone");

    p = vfork();
    if (p == 0) {
        execl("/proc/self/exe", argv[0], "--exec", work, (char *)0);
        _exit(6);
    }
    wait_ok(p, "vfork");

    open_close(work);
    printf("parent %d\n", (int)getpid());
    return 0;
}
