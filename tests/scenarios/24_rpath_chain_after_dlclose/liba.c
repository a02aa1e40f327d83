#include <dlfcn.h>
void *a_open_b(void) { return dlopen("libb.so", RTLD_NOW); }
