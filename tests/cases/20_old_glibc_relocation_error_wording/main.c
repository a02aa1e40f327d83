/* torch 2.0.1 with the pip cuDNN 8.9.2 while a lone libcudnn_ops_infer.so.8
 * of cuDNN 8.3.2 in /usr/local/cuda/lib64 is on LD_LIBRARY_PATH: the wheel's
 * cnn_infer binds to the wrong ops_infer. The report came from a glibc
 * older than 2.30, which words it "relocation error … not defined in file
 * … with link time reference".
 *
 * Sources:
 *   https://github.com/opendatalab/PDF-Extract-Kit/issues/57
 *   https://github.com/jianchang512/pyvideotrans/issues/160
 *   https://sourceware.org/bugzilla/show_bug.cgi?id=24741
 *
 * The dispatcher (through libtorch_cuda.so's DT_RPATH) takes ops_infer from
 * LD_LIBRARY_PATH; torch then loads cnn_infer from the wheel, whose versioned
 * reference to an internal ops_infer symbol cannot be bound. glibc >= 2.30
 * (this machine's) reports "undefined symbol: SYM, version VER"; the program
 * turns that text into the older glibc's, as the reporter's machine printed
 * it, and ends as the loader does on a relocation error (exit 127).
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *t = dlopen(case_path("../lib/python3.10/site-packages/torch/lib/libtorch_cuda.so"),
                     RTLD_NOW | RTLD_GLOBAL);
    if (!t) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    size_t (*version)(void) = (size_t(*)(void))case_sym(t, "torch_cudnn_version");
    const char *(*preload)(void) = (const char *(*)(void))case_sym(t, "torch_preload_cnn_infer");
    (void)version();
    const char *err = preload();
    if (!err)
        return 0;
    /* "FILE: undefined symbol: SYM, version VER" -> glibc < 2.30's wording */
    char file[4096], sym[512], ver[256];
    const char *u = strstr(err, ": undefined symbol: ");
    const char *v = u ? strstr(u, ", version ") : NULL;
    if (!u || !v)
        return 97;
    snprintf(file, sizeof file, "%.*s", (int)(u - err), err);
    snprintf(sym, sizeof sym, "%.*s", (int)(v - u - 20), u + 20);
    snprintf(ver, sizeof ver, "%s", v + 10);
    fprintf(stderr,
            "python3: relocation error: %s: symbol %s, version %s not defined in file %s with link time "
            "reference.\n",
            file, sym, ver, ver);
    _exit(127);
}
