/* Issue 14, item 5: requests served by an object already loaded from the
 * same file under another spelling: a path with `..` in it, and a bare name
 * whose search finds a symlink to that file. glibc maps nothing and returns
 * the object it has (same device and inode); the trace's `path` must be
 * that object's path, not the request or the symlink. */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    void *a = dlopen("./D1/libd.so", RTLD_NOW);
    void *b = dlopen("./D1/../D1/libd.so", RTLD_NOW);
    void *c = dlopen("libd_alias.so", RTLD_NOW);
    printf("first: %s\n", a ? "loaded" : dlerror());
    printf("./D1/../D1/libd.so: %s\n", b == a ? "the same object" : "another object");
    printf("libd_alias.so: %s\n", c == a ? "the same object" : "another object");
    return 0;
}
