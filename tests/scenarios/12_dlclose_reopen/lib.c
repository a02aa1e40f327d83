#include <stdio.h>
static int counter;
__attribute__((constructor)) static void init(void) { printf("  [libcounted ctor]\n"); }
__attribute__((destructor)) static void fini(void) { printf("  [libcounted dtor, counter=%d]\n", counter); }
int bump(void) { return ++counter; }
