#include <dlfcn.h>
void *b_open(const char *name) { return dlopen(name, RTLD_NOW); }
