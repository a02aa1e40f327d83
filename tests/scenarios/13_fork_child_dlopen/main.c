#include <dlfcn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void open_(const char *who, const char *name) {
    void *h = dlopen(name, RTLD_NOW);
    if (!h) { printf("%s: dlopen(%s): %s\n", who, name, dlerror()); return; }
    printf("%s: dlopen(%s): %s\n", who, name, ((const char *(*)(void))dlsym(h, "lib_name"))());
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    open_("parent", "libbefore.so");
    pid_t pid = fork();
    if (pid == 0) {
        open_("child", "libchild.so");
        open_("child", "libbefore.so");
        open_("child", "libchild-missing.so");
        /* a grandchild that exits right after its dlopen */
        pid_t g = fork();
        if (g == 0) { open_("grandchild", "libgrandchild.so"); _exit(0); }
        int st;
        waitpid(g, &st, 0);
        printf("child: grandchild exit %d\n", WEXITSTATUS(st));
        _exit(3);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("parent: child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    open_("parent", "libafter.so");
    void *c = dlopen("libchild.so", RTLD_NOW | RTLD_NOLOAD);
    printf("parent: libchild.so loaded: %s\n", c ? "yes" : "no");
    return 0;
}
