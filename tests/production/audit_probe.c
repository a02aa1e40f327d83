/* An rtld-audit module that only says it was loaded: the control of the
   secure-execution test (glibc does load a setuid audit module from a
   system directory into a setuid program here). */
#include <unistd.h>
unsigned int la_version(unsigned int version) {
    (void)version;
    static const char msg[] = "audit module loaded\n";
    if (write(2, msg, sizeof msg - 1) < 0) return 0;
    return 0;
}
