/* PyTorch 0.4 (conda, built with cuDNN 7.1.2) while a system cuDNN 7.6.0 in
 * /usr/local/cuda/lib64 comes first on LD_LIBRARY_PATH.
 *
 * Sources:
 *   https://github.com/jwyang/faster-rcnn.pytorch/issues/662
 *   https://github.com/xingyizhou/CenterNet/issues/119
 *   https://github.com/pytorch/pytorch/issues/17009
 *   https://github.com/pytorch/pytorch/pull/1586
 *
 * torch 0.4 imports _C with RTLD_GLOBAL; torch/backends/cudnn/__init__.py
 * then takes cudnnGetVersion from the global namespace
 * (ctypes.cdll.LoadLibrary(None)) and requires the same major.minor as the
 * build (v // 100): 7.6 against 7.1 fails although it is newer.
 */
#include "framework.h"

int main(void)
{
    case_unbuffered();
    void *c = dlopen(case_path("../lib/python3.6/site-packages/torch/_C.cpython-36m-x86_64-linux-gnu.so"),
                     RTLD_NOW | RTLD_GLOBAL);
    if (!c) {
        fprintf(stderr, "%s\n", dlerror());
        return 98;
    }
    int (*compiled)(void) = (int (*)(void))case_sym(c, "torch_cudnn_compiled_version");
    size_t (*global_version)(void) = (size_t(*)(void))case_sym(RTLD_DEFAULT, "cudnnGetVersion");
    long v = (long)global_version(), b = compiled();
    if (v / 100 == b / 100)
        return 0;
    fprintf(stderr,
            "Traceback (most recent call last):\n"
            "  File \"trainval_net.py\", line 321, in <module>\n"
            "    rois_label = fasterRCNN(im_data, im_info, gt_boxes, num_boxes)\n"
            "RuntimeError: cuDNN version mismatch: PyTorch was compiled against %ld but linked against %ld\n",
            b, v);
    return 1;
}
