/* A library that calls dlopen from its own code: glibc takes it as the
 * caller (its RUNPATH is searched). Built twice. The second build (PAD) has
 * no crti/crtn and no PLT: its code starts with PAD bytes of int3 where the
 * first build's _init, which the hooks return through, was. */
#include <dlfcn.h>
#ifdef PAD
char pad_data[256]; /* as many pages as the first build */
__attribute__((used, noinline)) int pad(int x)
{
    __asm__ volatile(".fill " PAD ", 1, 0xcc");
    return x + 1;
}
#endif
void *open_it(const char *name) { return dlopen(name, RTLD_NOW); }
