/* A "driver" whose constructor prints on stdout (as some stub drivers and
 * vendored libraries do) and whose cuDriverGetVersion answers 12345:
 * tests/probe_helper.rs checks that the noise cannot spoil the probe's
 * result, which the helper writes to the stdout it was started with. */
#include <stdio.h>

__attribute__((constructor)) static void noisy(void)
{
    printf("[{\"version\":1}]\n");
    fflush(stdout);
}

int cuDriverGetVersion(int *v)
{
    *v = 12345;
    return 0;
}
