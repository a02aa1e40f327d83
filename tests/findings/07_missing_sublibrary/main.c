/* 07_missing_sublibrary: cuDNN's dispatcher cannot load its core
 * sub-library (finding CDT006, and CDT010 for cuDNN's own message).
 *
 * Real-world situation: a site-packages/nvidia/cudnn/lib that lost its
 * libcudnn_graph.so.9 (a partial install or uninstall), while another copy
 * sits where the loader does not look (site-packages/torch/lib, as conda
 * and "large" wheels bundle cuDNN). cuDNN 9's dispatcher tries
 * libcudnn_graph.so.9.MIN.PATCH, .so.9.MIN, .so.9, .so, prints
 * "Unable to load any of {…}" and "Invalid handle. Cannot load symbol
 * cudnnGetVersion" and aborts; cuDNN 8's prints "Could not load library
 * libcudnn_ops_infer.so.8. Error: …" and aborts.
 * Sources (ids of data/sources.toml): the messages and SIGABRT [E6]; the
 * cuDNN layout (data/cudnn-layout.toml); install locations [R35][E7];
 * cuDNN in torch/lib [R44].
 *
 * Built linked against libcudnn.so.N (DT_RPATH). Dies of SIGABRT.
 */
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("calling cudnnGetVersion\n");
    printf("cudnnGetVersion=%zu\n", cudnnGetVersion());
    return 0;
}
