#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
/* Programs close descriptors they did not open (daemons, closefrom, a child
   tidying up after fork) and get the same numbers back for their own files.
   The trace must never write into those files, nor close them. */
/* Closes every descriptor above 2 except glibc's LD_DEBUG_OUTPUT log (the
   test harness's oracle, which has the very problem tested here: glibc
   would write its debug lines into whatever file reuses that number). */
static void close_all(void) {
    for (int fd = 3; fd < 4096; fd++) {
        char link[64], target[512];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n < 0) continue;
        target[n] = 0;
        const char *base = strrchr(target, '/');
        if (base && strncmp(base + 1, "ld.", 3) == 0) continue;
        close(fd);
    }
}
/* The lowest descriptor number not in use. */
static int lowest_free(void) {
    for (int fd = 0;; fd++) {
        char link[64], target[8];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        if (readlink(link, target, sizeof target) < 0) return fd;
    }
}
static void show(const char *who, const char *path) {
    char buf[256] = {0};
    int fd = open(path, O_RDONLY);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    printf("%s: %s holds %zd bytes: %s", who, strrchr(path, '/') + 1, n, buf);
}
int main(int argc, char **argv) {
    (void)argc;
    setvbuf(stdout, NULL, _IONBF, 0);
    char data[512], child[512];
    snprintf(data, sizeof data, "%s.data", argv[0]);
    snprintf(child, sizeof child, "%s.child", argv[0]);
    close_all();
    int want = lowest_free();
    int fd = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    printf("parent: open returned the lowest free descriptor: %s\n", fd == want ? "yes" : "no");
    dlopen("libcudnn_missing.so.9", RTLD_NOW); /* an event to write */
    write(fd, "program data\n", 13);
    dlopen("libcudnn_missing2.so.9", RTLD_NOW);
    close(fd);
    pid_t p = fork();
    if (p == 0) {
        close_all();
        int cwant = lowest_free();
        int cfd = open(child, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dlopen("libcudnn_missing3.so.9", RTLD_NOW); /* the child's first event */
        ssize_t n = write(cfd, "child data\n", 11);
        printf("child: lowest free descriptor: %s, write returned %zd\n", cfd == cwant ? "yes" : "no", n);
        _exit(0);
    }
    waitpid(p, NULL, 0);
    show("parent", data);
    show("parent", child);
    return 0;
}
