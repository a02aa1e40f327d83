/* A package that sets LD_LIBRARY_PATH to the pip cuDNN directory at the top
 * of its __init__.py, inside the running Python process, then loads a cuDNN
 * 9 dispatcher that cannot find its graph library otherwise.
 *
 * Sources:
 *   https://github.com/paninski-lab/lightning-pose/issues/460
 *   https://github.com/microsoft/onnxruntime/issues/25609
 *   https://codywu2010.wordpress.com/2015/12/31/why-your-python-script-should-not-modify-ld_library_path/
 *
 * glibc reads LD_LIBRARY_PATH once, at start-up: os.environ[...] = … changes
 * nothing for later dlopen calls of the same process. The dispatcher (a
 * vendored copy without RUNPATH; the report does not say which package's)
 * then fails: cuDNN prints two lines and aborts.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    /* lightning_pose/__init__.py: os.environ['LD_LIBRARY_PATH'] = f"{cudnn_lib}:…" */
    const char *cudnn_lib = case_path("../lib/python3.10/site-packages/nvidia/cudnn/lib");
    const char *old = getenv("LD_LIBRARY_PATH");
    char value[8192];
    snprintf(value, sizeof value, "%s:%s", cudnn_lib, old ? old : "");
    setenv("LD_LIBRARY_PATH", value, 1);
    fprintf(stderr, "Sanity Checking DataLoader 0:   0%%|                                                           | 0/1 [00:00<?, ?it/s]\n");
    void *ext = dlopen(case_path("../lib/python3.10/site-packages/vendorpkg/_ext.cpython-310-x86_64-linux-gnu.so"),
                       RTLD_NOW | RTLD_LOCAL);
    if (!ext) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    size_t (*version)(void) = (size_t(*)(void))case_sym(ext, "ext_cudnn_version");
    return version() == 91002 ? 0 : 97;
}
