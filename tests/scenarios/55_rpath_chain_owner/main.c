/* Issue 14, item 4: the RPATH chain. libq.so is a DT_NEEDED of libr.so,
 * whose RPATH ($ORIGIN = X) is a prefix of the directory that holds libq.so
 * (X/sub). glibc goes on up the chain to the executable, whose RPATH X/sub
 * has it: the owner is the executable, the directory X/sub. */
#include <stdio.h>

const char *r(void);

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("%s\n", r());
    return 0;
}
