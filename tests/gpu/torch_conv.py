import torch
torch.manual_seed(0)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
x = torch.randn(8, 3, 64, 64, device="cuda")
conv = torch.nn.Conv2d(3, 16, 3).cuda()
y = conv(x)
torch.cuda.synchronize()
print("torch conv ok", tuple(y.shape), "cudnn", torch.backends.cudnn.version(), "checksum", round(float(y.detach().double().sum()), 2))
import os
if os.environ.get("CDT_PRINT_MAPS"):  # pin-stack.sh: which cuDNN files this process mapped
    seen = {l.split()[-1] for l in open("/proc/self/maps") if "/libcudnn" in l}
    for p in sorted(seen):
        print("maps:", p)
