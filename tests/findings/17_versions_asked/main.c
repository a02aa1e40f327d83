/* 17_versions_asked: versions the program never asked, asked by the report
 * in a separate process (issue 14).
 *
 * Real-world situation: a program that only creates a cuDNN handle (most
 * inference servers: no cudnnGetVersion, no *VersionCheck, no
 * cuDriverGetVersion of its own). Inside the process the shim asks nothing
 * with a side effect: cuDNN 9's sub-library checks load the driver and call
 * cuInit, cuDriverGetVersion reads driver state. So the trace alone knows
 * the pip wheel's files by their names only (`libcudnn_ops.so.9`: major 9)
 * and the driver by its file name (no CUDA version). `report` asks the files
 * themselves, in a probe process: graph's version and CUDA build, each
 * sub-library's check against graph (0: the same version), the driver's
 * cuDriverGetVersion. With a CUDA 12.2 driver that is what shows that the
 * cuDNN built for CUDA 13.0 cannot run here (CDT004).
 * Sources (ids of data/sources.toml): the version queries [R4][E3][E9],
 * the checks and their statuses [R4] (data/cudnn-status.toml), driver
 * minimums [R9][R10] (data/cuda-drivers.toml), [E10].
 *
 * Built linked against libcudnn.so.9 (DT_RPATH). Exits 0 when cudnnCreate
 * succeeds.
 */
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    cudnnHandle_t h = NULL;
    cudnnStatus_t st = cudnnCreate(&h);
    printf("cudnnCreate=%d\n", (int)st);
    if (st != CUDNN_STATUS_SUCCESS)
        return 1;
    cudnnDestroy(h);
    return 0;
}
