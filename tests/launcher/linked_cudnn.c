/* linked_cudnn: linked against libcudnn.so.9 (DT_NEEDED, found through the
 * DT_RPATH given at link time), like libtorch_cuda.so; prints what
 * cudnnGetVersion answers (tests/launcher.rs). */
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("cudnnGetVersion=%zu\n", cudnnGetVersion());
    return 0;
}
