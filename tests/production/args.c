/* Issue 11 item 9: prints how many arguments it got and makes one event (a
   CUDA-family library that is not there), so that its argv, recorded in
   the trace's header, shows in the summary. */
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
    (void)argv;
    dlopen("libcudnn_args.so.9", RTLD_NOW);
    printf("%d arguments\n", argc - 1);
    return 0;
}
