/* Issue 11 item 9: pin_vanish.c DIR: the pin directory DIR vanishes while
   the program runs (a cleanup job, an unmounted volume), then the program
   asks for a cuDNN sub-library, which the strict pin sends into DIR. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    if (argc != 2) return 2;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", argv[1]);
    if (system(cmd) != 0) return 3;
    void *h = dlopen("libcudnn_ops.so.9", RTLD_NOW);
    printf("libcudnn_ops.so.9: %s\n", h ? "loaded" : "not loaded");
    return 0;
}
