/* cpuid.c: what one cpuid costs here (a trap to the hypervisor on a VM);
 * glibc's start runs 43 of them in a static program. cc -O2 cpuid.c */
#include <cpuid.h>
#include <stdio.h>
#include <time.h>
int main(void)
{
    unsigned a = 0, b, c, d;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 1000; i++)
        __cpuid_count(4, i & 3, a, b, c, d);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("cpuid: %.2f us each\n",
           ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1000 / 1000.0);
    return (int)(a & 0);
}
