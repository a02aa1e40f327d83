/* Linked against libcudnn.so.9 (DT_NEEDED of the executable, found through
 * its DT_RPATH at start-up, before any code of the program runs). */
#include "pin_common.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    void *h = dlopen("libcudnn.so.9", RTLD_LAZY | RTLD_NOLOAD);
    printf("libcudnn.so.9 (DT_NEEDED of the executable): %s\n", handle_path(h));
    print_version("cudnnGetVersion()", (long)cudnnGetVersion());
    cudnnStatus_t st = cudnnOpsVersionCheck();
    printf("cudnnOpsVersionCheck() = %d (%s)\n", (int)st, cudnnGetErrorString(st));
    list_cudnn("main");
    return 0;
}
