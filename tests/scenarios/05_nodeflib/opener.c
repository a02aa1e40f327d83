/* NAME_open(name): dlopen from this library's own code, so the loader applies
 * this library's flags (DF_1_NODEFLIB or not). */
#include <dlfcn.h>
#include <stdio.h>
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(x) #x
#define STR(x) STR_(x)
void CAT(NAME, _open)(const char *name, const char *label) {
    void *h = dlopen(name, RTLD_NOW);
    if (h)
        printf("%-6s dlopen(%s): ok\n", STR(NAME), label ? label : name);
    else
        printf("%-6s dlopen(%s): %s\n", STR(NAME), label ? label : name,
               label ? "failed" : dlerror());
}
