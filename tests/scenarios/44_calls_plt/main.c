/* The program's own calls through the PLT (an executable linked against the
 * cuDNN dispatcher, as libtorch_cuda.so is). The results and errno must
 * reach the program as without the shim. */
#include <errno.h>
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    errno = 77; /* the wrappers must leave the program's errno alone */
    size_t v = cudnnGetVersion();
    printf("cudnnGetVersion() = %zu, errno %d\n", v, errno);
    printf("cudnnGetCudartVersion() = %zu\n", cudnnGetCudartVersion());
    printf("cudnnGetMaxDeviceVersion() = %zu\n", cudnnGetMaxDeviceVersion());
    for (int p = MAJOR_VERSION; p <= PATCH_LEVEL; p++) {
        int x = -1;
        cudnnStatus_t st = cudnnGetProperty((libraryPropertyType)p, &x);
        printf("cudnnGetProperty(%d) = %d, value %d\n", p, (int)st, x);
    }
    cudnnHandle_t h = NULL;
    cudnnStatus_t st = cudnnCreate(&h);
    printf("cudnnCreate() = %d %s\n", (int)st, cudnnGetErrorString(st));
    printf("cudnnDestroy() = %d\n", (int)cudnnDestroy(h));
    printf("cudnnOpsVersionCheck() = %d\n", (int)cudnnOpsVersionCheck());
    errno = 78;
    printf("cudnnGetVersion() again = %zu, errno %d\n", cudnnGetVersion(), errno);
    return 0;
}
