"""Checks one cudnn-trace run of a real framework on the GPU machine.

usage: check_trace.py TRACE_DIR NAME [--expect-cudnn] [--static-cudart]
Reads the shim's JSONL files directly (not the CLI's report) and checks:
the pip cuDNN files come from site-packages/nvidia/cudnn/lib, with reasons;
libcudart.so.13 and libcuda.so.1 are there; no file of the system cuDNN
(/usr/lib/x86_64-linux-gnu or /lib/x86_64-linux-gnu) entered any process;
the object that asks the driver for its entry points (driver_client, issue
14) is libcudart.so.13, or with --static-cudart a CuPy module that carries a
static runtime.
"""
import glob, json, os, sys

trace_dir, name = sys.argv[1], sys.argv[2]
expect_cudnn = "--expect-cudnn" in sys.argv
# CuPy 14 links the CUDA runtime statically: it reports runtime 13020 while
# the only cudart file on the machine's pip path is 13.0, and no libcudart
# file enters its process. Then only the driver is expected as a file.
static_cudart = "--static-cudart" in sys.argv
expect_calls = "--expect-calls" in sys.argv
loads, failed, procs, versions, calls, clients = [], [], 0, [], [], []
for f in sorted(glob.glob(os.path.join(trace_dir, "*.jsonl"))):
    for line in open(f):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e["ev"] == "process":
            procs += 1
        elif e["ev"] == "load":
            loads.append(e)
        elif e["ev"] == "load_failed":
            failed.append(e)
        elif e["ev"] == "version":
            versions.append(e)
        elif e["ev"] == "call":
            calls.append(e)
        elif e["ev"] == "driver_client":
            clients.append(e)

problems = []
def short(p):
    return p.replace("/opt/torch/.venv/lib/python3.12/site-packages/", "site-packages/") if p else p

print(f"== {name}: {procs} process file(s), {len(loads)} CUDA-family load events, {len(failed)} failed loads")
for e in loads:
    if not e.get("new", True):
        continue
    owner = f" of {short(e['reason_owner'])}" if e.get("reason_owner") else ""
    print(f"  {short(e['path'])}\n      {e['reason']}{owner}  via {e['via']}  requested as {e['name']}  by {short(e.get('requester'))}")
for e in failed:
    fatal = " FATAL (start-up)" if e.get("fatal") else ""
    print(f"  FAILED {e['name']} (by {short(e.get('requester'))}, {len(e['tried'])} candidates){fatal}")
for e in clients:
    print(f"  driver client {short(e['path'])} ({e.get('fn')} via {e.get('via')}) static_runtime={e.get('static_runtime')} family={e.get('family')} build_id={e.get('build_id')}")
for e in loads:
    if e.get("stub"):
        print(f"  stub {short(e['path'])} ({e.get('family')})")

def seen(pred):
    return [e for e in loads if pred(e)]

paths = [(e["path"], e.get("realpath") or "") for e in loads]
system = [p for p, r in paths if any(s in x for x in (p, r) for s in ("/usr/lib/x86_64-linux-gnu/libcudnn", "/lib/x86_64-linux-gnu/libcudnn"))]
if system:
    problems.append(f"system cuDNN files entered the process: {system}")
if expect_cudnn:
    pip = seen(lambda e: "site-packages/nvidia/cudnn/lib/libcudnn" in e["path"])
    if not pip:
        problems.append("no cuDNN file from site-packages/nvidia/cudnn/lib")
    if not any(os.path.basename(e["path"]).startswith("libcudnn_graph") for e in pip):
        problems.append("libcudnn_graph from the pip directory not seen")
    for e in pip:
        if e["reason"] in ("unknown", "RPATH/RUNPATH"):
            problems.append(f"unattributed reason for {e['path']}: {e['reason']}")
cudart = seen(lambda e: os.path.basename(e["path"]) == "libcudart.so.13")
if static_cudart and cudart:
    problems.append("libcudart.so.13 entered a process said to link cudart statically")
if not static_cudart and not cudart:
    problems.append("libcudart.so.13 not seen")
if not seen(lambda e: os.path.basename(e["path"]) == "libcuda.so.1"):
    problems.append("libcuda.so.1 not seen")
if static_cudart:
    if not any(e.get("static_runtime") and "cupy" in e["path"] for e in clients):
        problems.append(f"no CuPy module recorded as carrying a static CUDA runtime: {clients}")
elif not any(os.path.basename(e["path"]) == "libcudart.so.13" and not e.get("static_runtime") for e in clients):
    problems.append(f"libcudart.so.13 not recorded as the driver's client: {clients}")
if expect_calls:
    # Issue 3's real-stack check: PyTorch's cudnnCreate succeeded, cuDNN 9.19
    # says it was built for CUDA 13, and the driver says 13.0.
    for v in versions:
        if v.get("source") == "query":
            print(f"  version {short(v['path'])}: {v.get('version')} raw={v.get('raw')} cuda_build={v.get('cuda_build')} max_device={v.get('max_device')} driver_file={v.get('driver_file')}")
    for c in calls:
        print(f"  call {c['fn']} via {c.get('via')} lib={short(c['lib'])} n={c.get('n')} status={c.get('status')} value={c.get('value')} dur_ns={c.get('dur_ns')}")
    if not any(c["fn"] == "cudnnCreate" and c.get("status") == 0 for c in calls):
        problems.append("no successful cudnnCreate call recorded")
    graph = [v for v in versions if v.get("source") == "query" and "libcudnn_graph" in v["path"]]
    if not any(v.get("version") == "9.19.0" and 13000 <= (v.get("cuda_build") or 0) < 14000 for v in graph):
        problems.append(f"cuDNN 9.19.0 with a CUDA 13 build not reported: {graph}")
    if not any(v.get("family") == "cuda" and v.get("source") == "query" and v.get("version") == "13.0" for v in versions):
        problems.append("driver version 13.0 not reported by libcuda")
for p in problems:
    print("  PROBLEM:", p)
print(f"== {name}: {'PASS' if not problems else 'FAIL'}")
sys.exit(1 if problems else 0)
