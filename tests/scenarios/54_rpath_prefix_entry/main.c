/* Issue 14, item 4: an RPATH (and a RUNPATH) whose first entry is a prefix
 * of the directory that holds the library (`A:A/sub`). The directory glibc
 * found it in, and the entry that named it, is A/sub. */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    void *h = dlopen("libpa.so", RTLD_NOW);
    const char *(*id)(void) = h ? (const char *(*)(void))dlsym(h, "id") : NULL;
    printf("libpa.so: %s\n", id ? id() : dlerror());
    void *r = dlopen("lib/libr.so", RTLD_NOW);
    const char *(*next)(void) = r ? (const char *(*)(void))dlsym(r, "open_next") : NULL;
    printf("librs.so through libr.so's RUNPATH: %s\n", next ? next() : dlerror());
    return 0;
}
