/* Issue 14, item 3: never runs. ld.so cannot find libcudart.so.12, a
 * DT_NEEDED of libtorchlike.so, prints "error while loading shared
 * libraries" and _exit(127)s, with no audit callback after the last
 * candidate. The trace must still hold the failure with every candidate. */
#include <stdio.h>

int torchlike_runtime(void);

int main(void)
{
    printf("runtime %d\n", torchlike_runtime());
    return 0;
}
