/* ollama's CUDA runner, unpacked with libcudart.so.12.0 but without the
 * soname link libcudart.so.12 that its DT_NEEDED names.
 *
 * Source:
 *   https://github.com/ollama/ollama/issues/602
 *
 * Linked like the runner: DT_NEEDED libcudart.so.12, DT_RUNPATH $ORIGIN. The
 * loader gives up at start-up (exit 127) before main runs.
 */
#include "framework.h"

int main(void)
{
    int v = 0;
    return cudaRuntimeGetVersion(&v) == cudaSuccess ? 0 : 1;
}
