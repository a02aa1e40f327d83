/* faster-whisper with ctranslate2 4.5.0 after torch 2.5 (pip cuDNN 9.1.0.70)
 * in one Python process.
 *
 * Sources:
 *   https://github.com/OpenNMT/CTranslate2/issues/1806
 *   https://github.com/OpenNMT/CTranslate2/issues/1826
 *   https://github.com/SYSTRAN/faster-whisper/issues/1086
 *   https://github.com/Softcatala/whisper-ctranslate2/issues/115
 *
 * ctranslate2 4.5.0 vendors only cuDNN's dispatcher,
 * ctranslate2.libs/libcudnn-74a4c495.so.9.1.0, with DT_RPATH
 * "ctranslate2.libs" (relative to the current directory, not $ORIGIN), so it
 * cannot reach site-packages/nvidia/cudnn/lib. torch, imported first, made
 * libcudnn_graph.so.9 resident (torch.backends.cudnn.version()); the vendored
 * dispatcher's third graph name (libcudnn_graph.so.9) matches it, but
 * libcudnn_ops is not resident and cannot be found: cuDNN prints two lines and
 * aborts.
 */
#include "framework.h"

#define SITE "../lib/python3.10/site-packages"

int main(void)
{
    case_unbuffered();
    /* import torch; torch.backends.cudnn.version() */
    void *torch_cudnn = dlopen(case_path(SITE "/nvidia/cudnn/lib/libcudnn.so.9"), RTLD_NOW | RTLD_LOCAL);
    if (!torch_cudnn)
        return 98;
    size_t (*version)(void) = (size_t(*)(void))case_sym(torch_cudnn, "cudnnGetVersion");
    if (version() != 90100)
        return 97;
    /* import faster_whisper; WhisperModel(..., device="cuda").transcribe(...) */
    void *ct2 = dlopen(case_path(SITE "/ctranslate2.libs/libctranslate2-bc15bf3f.so.4.5.0"), RTLD_NOW | RTLD_LOCAL);
    if (!ct2) {
        fprintf(stderr, "%s\n", dlerror());
        return 96;
    }
    int (*encode)(void) = (int (*)(void))case_sym(ct2, "ct2_encode");
    return encode();
}
