/* 02_cudnn9_two_installs: cuDNN 9 sub-libraries from two installs
 * (findings CDT002 and CDT008).
 *
 * Real-world situation: a PyTorch-like program links libcudnn.so.9 through
 * its DT_RPATH (pip cuDNN 9.19 in site-packages/nvidia/cudnn/lib), and a
 * directory holding the system's cuDNN 9.14 libcudnn_graph (with its engine
 * libraries, but without the legacy-API ops/cnn/adv) is on LD_LIBRARY_PATH.
 * glibc searches LD_LIBRARY_PATH before the dispatcher's RUNPATH $ORIGIN, so
 * graph comes from 9.14 while ops comes from the wheel: cudnnGetVersion()
 * says 91400 and cudnnOpsVersionCheck() returns 1002
 * CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH.
 * Sources (ids of data/sources.toml): LD_LIBRARY_PATH is searched before
 * the caller's RUNPATH [R34]; the system graph 9.14 under PyTorch's 9.19
 * [E-probe]; graph and ops of two releases give cudnnOpsVersionCheck = 1002
 * [E11], CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH [R4].
 *
 * Built linked against libcudnn.so.9 with a DT_RPATH. Exits 0 (the mismatch
 * goes unnoticed until an operation needs ops).
 */
#include <stdio.h>

#include "fake_api.h"

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("cudnnGetVersion=%zu\n", cudnnGetVersion());
    printf("cudnnOpsVersionCheck=%d\n", (int)cudnnOpsVersionCheck());
    return 0;
}
