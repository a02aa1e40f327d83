/* 12_pytorch_message: PyTorch's cuDNN version message in stderr, explained
 * from the trace (finding CDT010, with CDT008 for the cause).
 *
 * Real-world situation (the project's GPU probe): PyTorch 2.11+cu130,
 * compiled against cuDNN 9.19.0, links libcudnn.so.9 through the DT_RPATH of
 * libtorch_cuda.so (site-packages/nvidia/cudnn/lib), and the system's cuDNN
 * 9.14 directory is on LD_LIBRARY_PATH: the dispatcher comes from the wheel,
 * libcudnn_graph from the system, cudnnGetProperty answers 9.14.0, and
 * torch.backends.cudnn raises its incompatibility error.
 * Sources (ids of data/sources.toml): PyTorch's rule and exact message
 * [R24]; the two cuDNN copies of the GPU machine [E-probe]; the loader's
 * search order [R34].
 *
 * Built linked against libcudnn.so.9 (DT_RPATH) and run from a venv's bin/.
 * Does what torch/backends/cudnn/__init__.py does: reads the runtime version
 * with cudnnGetProperty, applies PyTorch's rule, prints its message and
 * exits 1 when it fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_api.h"

/* The cuDNN PyTorch was "compiled against". */
#define COMPILED_MAJOR 9
#define COMPILED_MINOR 19
#define COMPILED_PATCH 0

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    int major = -1, minor = -1, patch = -1;
    cudnnGetProperty(MAJOR_VERSION, &major);
    cudnnGetProperty(MINOR_VERSION, &minor);
    cudnnGetProperty(PATCH_LEVEL, &patch);
    printf("runtime cuDNN (%d, %d, %d)\n", major, minor, patch);
    int ok = major == COMPILED_MAJOR &&
             (major < 7 ? minor == COMPILED_MINOR : minor >= COMPILED_MINOR);
    if (ok)
        return 0;
    const char *llp = getenv("LD_LIBRARY_PATH");
    fprintf(stderr,
            "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against "
            "(%d, %d, %d) but found runtime version (%d, %d, %d). PyTorch already comes "
            "bundled with cuDNN. One option to resolving this error is to ensure PyTorch "
            "can find the bundled cuDNN. ",
            COMPILED_MAJOR, COMPILED_MINOR, COMPILED_PATCH, major, minor, patch);
    if (llp && (strstr(llp, "cuda") || strstr(llp, "cudnn")))
        fprintf(stderr, "Looks like your LD_LIBRARY_PATH contains incompatible version of cudnn. "
                        "Please either remove it from the path or install cudnn (%d, %d, %d)\n",
                COMPILED_MAJOR, COMPILED_MINOR, COMPILED_PATCH);
    else
        fprintf(stderr, "one possibility is that there is a conflicting cuDNN in LD_LIBRARY_PATH.\n");
    return 1;
}
