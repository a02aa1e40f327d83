/* 03_cudnn8_two_installs: cuDNN 8 sub-libraries from two installs
 * (finding CDT002, cuDNN 8 status 14).
 *
 * Real-world situation: a program linked against the pip cuDNN 8.9.7
 * (site-packages/nvidia/cudnn/lib, DT_RPATH) while LD_LIBRARY_PATH holds a
 * directory with another build's libcudnn_ops_infer.so.8 (8.9.2: a stray
 * copy in a toolkit's lib64). The v8 dispatcher opens its sub-libraries by
 * soname, so ops_infer comes from LD_LIBRARY_PATH and cnn_infer from the
 * wheel, bound to the other ops_infer: cudnnCnnInferVersionCheck() returns
 * 14 CUDNN_STATUS_VERSION_MISMATCH (with real files the loader may fail
 * earlier: "undefined symbol: …, version libcudnn_ops_infer.so.8").
 * Sources (ids of data/sources.toml): the cuDNN 8 layout
 * (data/cudnn-layout.toml), mixing v8 sub-libraries from different builds
 * [R46], CUDNN_STATUS_VERSION_MISMATCH = 14 [R5], the loader's search order
 * [R34].
 *
 * Built linked against libcudnn.so.8 with a DT_RPATH. Exits 0.
 */
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("cudnnGetVersion=%zu\n", cudnnGetVersion());
    printf("cudnnCnnInferVersionCheck=%d\n", (int)cudnnCnnInferVersionCheck());
    return 0;
}
