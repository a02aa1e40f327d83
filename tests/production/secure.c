/* Issue 11 item 3: run setuid root by an unprivileged user. Prints what the
   kernel says about secure execution, and whether libcudnn.so.9 loads (the
   pin would make it load from CUDNN_TRACE_PIN). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
/* secure.c NAME: also says whether a file named NAME is mapped (the audit
   module, proof that the loader did load it). */
int main(int argc, char **argv) {
    printf("secure=%lu euid=%d\n", getauxval(AT_SECURE), (int)geteuid());
    if (argc > 1) {
        char line[4096];
        int mapped = 0;
        FILE *f = fopen("/proc/self/maps", "r");
        while (f && fgets(line, sizeof line, f))
            if (strstr(line, argv[1])) mapped = 1;
        if (f) fclose(f);
        fprintf(stderr, "%s mapped: %s\n", argv[1], mapped ? "yes" : "no");
    }
    void *h = dlopen("libcudnn.so.9", RTLD_NOW);
    printf("libcudnn.so.9: %s\n", h ? "loaded" : "not loaded");
    return 3;
}
