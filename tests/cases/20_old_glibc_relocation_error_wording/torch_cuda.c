#define _GNU_SOURCE /* dladdr */
/* Stand-in for torch/lib/libtorch_cuda.so (torch 2.0.1+cu118): DT_NEEDED
 * libcudnn.so.8 through DT_RPATH $ORIGIN/../../nvidia/cudnn/lib, and
 * torch's preload of libcudnn_cnn_infer.so.8 by path (pytorch#98644).
 * Sources: see main.c. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "fake_api.h"

__attribute__((visibility("default"))) size_t torch_cudnn_version(void)
{
    return cudnnGetVersion();
}

/* NULL when it loads; else the loader's error text. */
__attribute__((visibility("default"))) const char *torch_preload_cnn_infer(void)
{
    Dl_info self;
    static char path[4096];
    if (!dladdr((void *)torch_preload_cnn_infer, &self) || !self.dli_fname)
        return "dladdr failed";
    snprintf(path, sizeof path, "%s", self.dli_fname);
    char *slash = strrchr(path, '/');
    if (!slash)
        return "no directory";
    snprintf(slash, sizeof path - (size_t)(slash - path), "/../../nvidia/cudnn/lib/libcudnn_cnn_infer.so.8");
    return dlopen(path, RTLD_NOW | RTLD_GLOBAL) ? NULL : dlerror();
}
