/* The program of the TF-style pin scenarios: uses the stub of tf_stub.c
 * (lib/libtfstub.so, DT_NEEDED) and prints what TensorFlow would log. */
#include "pin_common.h"

const char *tf_cudnn_soname(void);
const char *tf_load_cudnn(void);
int tf_loaded(void);
size_t tf_cudnn_get_version(void);

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const char *r = tf_load_cudnn();
    if (!tf_loaded()) {
        printf("Could not load dynamic library '%s'; dlerror: %s\n", tf_cudnn_soname(), r);
        return 1;
    }
    printf("Successfully opened dynamic library %s: %s\n", tf_cudnn_soname(), r);
    print_version("Loaded cuDNN version", (long)tf_cudnn_get_version());
    void *g = dlsym(RTLD_DEFAULT, "cudnnGetVersion");
    printf("dlsym(RTLD_DEFAULT, cudnnGetVersion): %s\n", g ? "found" : "NULL (RTLD_LOCAL)");
    list_cudnn("main");
    return 0;
}
