#include <dlfcn.h>
#include <stdio.h>
const char *helper(void) { return "main's helper"; }
static void go(const char *path, int flags, const char *who) {
    void *h = dlopen(path, flags);
    if (!h) { printf("dlopen(%s): %s\n", path, dlerror()); return; }
    ((void (*)(const char *))dlsym(h, "run"))(who);
    const char *(*hp)(void) = (const char *(*)(void))dlsym(h, "helper");
    printf("%s: dlsym(handle, helper)() -> %s\n", who, hp());
}
int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    go("plugins/libshallow.so", RTLD_NOW, "shallow");
    go("plugins/libdeep.so", RTLD_NOW | RTLD_DEEPBIND, "deep");
    printf("main: helper() -> %s\n", helper());
    return 0;
}
