"""For tests/gpu/timeline.sh: one profiled cuDNN convolution, the first of the
process (so that cuDNN's lazy sub-library loads fall inside the profiler's
window), then a second one (no loads expected), under torch.profiler.

usage: python timeline_prof.py TORCH_TRACE.json CLOCKS.json

CLOCKS.json gets this process's pid and a bracketed CLOCK_MONOTONIC /
CLOCK_REALTIME pair taken before and after the window (offset = realtime -
monotonic midpoint, and the bracket's width), the precise offset cudnn-trace's
header lacks today (it has wall_ms only)."""
import json
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def pair():
    m0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    r = time.clock_gettime_ns(time.CLOCK_REALTIME)
    m1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    return {"offset_ns": r - (m0 + m1) // 2, "width_ns": m1 - m0}


# CDT_TIMELINE_DEVICE=cpu: a dry run of the script's plumbing on a machine
# without a GPU (its checks then fail: no cuDNN is used).
dev = os.environ.get("CDT_TIMELINE_DEVICE", "cuda")
sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev == "cuda" else [])
before = pair()
torch.backends.cudnn.benchmark = False
x = torch.randn(8, 64, 56, 56, device=dev)
conv = torch.nn.Conv2d(64, 64, 3, padding=1).to(dev)
sync()
with profile(activities=acts) as prof:
    with record_function("first_conv"):
        y = conv(x)
        sync()
    with record_function("second_conv"):
        y = conv(x)
        sync()
after = pair()
prof.export_chrome_trace(sys.argv[1])
json.dump({"pid": os.getpid(), "before": before, "after": after,
           "cudnn": torch.backends.cudnn.version(), "torch": torch.__version__},
          open(sys.argv[2], "w"))
print("profiled conv ok", tuple(y.shape), "cudnn", torch.backends.cudnn.version())
