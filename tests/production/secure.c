/* Issue 11 item 3: run setuid root by an unprivileged user. Prints what the
   kernel says about secure execution, and whether libcudnn.so.9 loads (the
   pin would make it load from CUDNN_TRACE_PIN). */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <unistd.h>
int main(void) {
    printf("secure=%lu euid=%d\n", getauxval(AT_SECURE), (int)geteuid());
    void *h = dlopen("libcudnn.so.9", RTLD_NOW);
    printf("libcudnn.so.9: %s\n", h ? "loaded" : "not loaded");
    return 3;
}
