/* One library of the scenario; ID names the copy (set with -DID=...). */
#include <dlfcn.h>
#include <stdio.h>

const char *id(void) { return ID; }

#ifdef OPENS
/* Opens OPENS from this library's own code, so that its RUNPATH applies. */
const char *open_next(void)
{
    void *h = dlopen(OPENS, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return dlerror();
    const char *(*f)(void) = (const char *(*)(void))dlsym(h, "id");
    return f ? f() : "no id";
}
#endif
