/* Children inherit the pin: a forked child (no exec) and a child that execs
 * another program both dlopen cuDNN by SONAME; then the parent does. Each
 * process is waited for before the next prints, so the output is ordered. */
#include "pin_common.h"
#include <sys/wait.h>
#include <unistd.h>

static void use(const char *who)
{
    void *h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("%s: dlopen(libcudnn.so.9): %s\n", who, dlerror());
        return;
    }
    printf("%s: dlopen(libcudnn.so.9): %s\n", who, handle_path(h));
    char label[64];
    snprintf(label, sizeof label, "%s: cudnnGetVersion()", who);
    call_version(h, label);
    list_cudnn(who);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int st = 0;
    pid_t a = fork();
    if (a == 0) {
        use("forked child");
        exit(0);
    }
    waitpid(a, &st, 0);
    printf("parent: forked child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    pid_t b = fork();
    if (b == 0) {
        execl("./steps", "./steps", "open:libcudnn.so.9", "version", "list", (char *)NULL);
        _exit(127);
    }
    waitpid(b, &st, 0);
    printf("parent: exec'd child exit %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    use("parent");
    return 0;
}
