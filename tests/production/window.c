/* Issue 11 item 4: a program linked against a CUDA-family library, so that
   the shim opens its start-up window (startup.rs) before main. */
#include <stdio.h>
int cudnnGetVersion(void);
int main(void) {
    printf("cudnn %d\n", cudnnGetVersion());
    return 0;
}
