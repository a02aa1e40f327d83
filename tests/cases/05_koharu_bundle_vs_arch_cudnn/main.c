/* koharu (a Rust app) with its bundled cuDNN 9.21 in
 * ~/.local/share/Koharu/runtime/cuda on LD_LIBRARY_PATH, on CachyOS (Arch)
 * with the system package cudnn 9.22.0.52 in /usr/lib.
 *
 * Source:
 *   https://github.com/koharu-rs/koharu/issues/694
 *
 * The app dlopens libcudnn.so.9 by name (LD_LIBRARY_PATH serves the bundle);
 * the bundle lacks one engine library (libcudnn_engines_tensor_ir.so.9, an
 * assumption: the report does not say which file), which the ld.so cache
 * then serves from /usr/lib (9.22.0). The detection engines fail to finalize
 * and the app reports the status and exits 1.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *h = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 98;
    size_t (*version)(void) = (size_t(*)(void))case_sym(h, "cudnnGetVersion");
    cudnnStatus_t (*finalize)(cudnnBackendDescriptor_t) =
        (cudnnStatus_t(*)(cudnnBackendDescriptor_t))case_sym(h, "cudnnBackendFinalize");
    const char *(*name)(cudnnStatus_t) =
        (const char *(*)(cudnnStatus_t))case_sym(h, "cudnnGetErrorString");
    if (version() != 92100)
        return 97;
    cudnnStatus_t st = finalize(NULL);
    if (st != CUDNN_STATUS_SUCCESS) {
        fprintf(stderr, "Error: %s\n", name(st));
        return 1;
    }
    return 0;
}
