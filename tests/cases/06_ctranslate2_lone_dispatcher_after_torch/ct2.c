/* Stand-in for ctranslate2.libs/libctranslate2-bc15bf3f.so.4.5.0: linked
 * against the vendored dispatcher libcudnn-74a4c495.so.9.1.0 (DT_NEEDED),
 * it asks cuDNN for its version and then for a tensor descriptor, as the
 * first Conv1D of faster-whisper's encoder does. Sources: see main.c. */
#include "fake_api.h"

__attribute__((visibility("default"))) int ct2_encode(void)
{
    if (cudnnGetVersion() != 90100)
        return 2;
    cudnnTensorDescriptor_t d;
    return cudnnCreateTensorDescriptor(&d) == CUDNN_STATUS_SUCCESS ? 0 : 1;
}
