#!/usr/bin/env bash
# Timeline check on the GPU machine (issue 13): does `report --format chrome`
# line up with a real PyTorch profiler trace of the same process?
#
# Runs tests/gpu/timeline_prof.py (a torch.profiler trace of the process's first
# cuDNN convolution, then a second one) under cudnn-trace, exports the profiler's
# Chrome trace, writes ours (`report --format chrome`, and again with
# `--align-to` the profiler's trace), and checks and prints the clock relation:
#   - both files' baseTimeNanoseconds follow Kineto's rule (a multiple of
#     7,889,238 s) and are equal (else --align-to's file is used);
#   - our per-process wall-clock offset (from the header's wall_ms) against the
#     precise CLOCK_REALTIME - CLOCK_MONOTONIC pair the script took (|error| <= 1 ms);
#   - the cuDNN sub-library loads of the first convolution come before the first
#     convolution kernel, and fall inside the first_conv range (within the 0.5 ms
#     uncertainty), none inside second_conv;
#   - where each of our events inside the profiler's window lands (the innermost
#     profiler op on the same thread), printed as a table.
# Offline: needs only python3 with torch (CUDA) and the cudnn-trace binary.
#
# usage: tests/gpu/timeline.sh [CUDNN_TRACE_BINARY] [OUT_DIR]
# (binary default: target/release/cudnn-trace)
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-target/release/cudnn-trace}
out=${2:-${OUT:-/tmp/cudnn-trace-timeline}}
py=${PYTHON:-python3}
[ -x "$bin" ] || { echo "no cudnn-trace binary at $bin (pass it as \$1)"; exit 2; }
rm -rf "$out"; mkdir -p "$out"
echo "host: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null) glibc $(ldd --version | head -1 | awk '{print $NF}')"
echo "binary: $("$bin" --version)"

PYTHONUNBUFFERED=1 timeout 600 "$bin" -q --out "$out/trace" -- \
    "$py" "$here/timeline_prof.py" "$out/torch.json" "$out/clocks.json" >"$out/prof.out" 2>"$out/prof.err"
rc=$?
cat "$out/prof.out"
if [ $rc != 0 ] || [ ! -s "$out/torch.json" ]; then
    echo "the profiled run failed (rc=$rc):"; tail -30 "$out/prof.err"; exit 1
fi
"$bin" report --format chrome "$out/trace" >"$out/cdt.json" || { echo "report --format chrome failed"; exit 1; }
"$bin" report --format chrome --align-to "$out/torch.json" "$out/trace" >"$out/cdt-aligned.json" ||
    { echo "report --format chrome --align-to failed"; exit 1; }

"$py" - "$out" <<'PY'
import json, sys, glob, os
out = sys.argv[1]
torch_doc = json.load(open(f"{out}/torch.json"))
ours = json.load(open(f"{out}/cdt.json"))
aligned = json.load(open(f"{out}/cdt-aligned.json"))
clocks = json.load(open(f"{out}/clocks.json"))
fail = []
PERIOD = 7_889_238 * 10**9

def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        fail.append(what)

tb, ob = torch_doc.get("baseTimeNanoseconds"), ours["baseTimeNanoseconds"]
check(tb is not None and tb % PERIOD == 0, f"torch baseTimeNanoseconds {tb} is a multiple of 7889238 s")
check(ob % PERIOD == 0, f"our baseTimeNanoseconds {ob} is a multiple of 7889238 s")
print(f"      bases {'equal' if tb == ob else 'DIFFER (a quarter boundary): using the --align-to file'}")
check(aligned["baseTimeNanoseconds"] == tb, "--align-to copies the torch base")
doc = ours if tb == ob else aligned

# Our offset (header wall_ms) against the precise pair.
pid = clocks["pid"]
hdr = None
for f in glob.glob(f"{out}/trace/{pid}*.jsonl"):
    h = json.loads(open(f).readline())
    if h.get("origin") != "reopen":
        hdr = h
ours_off = hdr["wall_ms"] * 10**6 + 500_000 - hdr["t_ns"]
for k in ("before", "after"):
    p = clocks[k]
    err = (ours_off - p["offset_ns"]) / 1000
    print(f"      offset error vs the {k} pair: {err:+.1f} us (pair width {p['width_ns']/1000:.1f} us)")
check(abs(ours_off - clocks["before"]["offset_ns"]) <= 1_000_000, "header offset within 1 ms of the precise pair")
drift = (clocks["after"]["offset_ns"] - clocks["before"]["offset_ns"]) / 1000
print(f"      realtime-monotonic drift over the run: {drift:+.1f} us (a clock step if large)")

tev = torch_doc["traceEvents"]
def num(x):
    return float(x)
ranges = {e["name"]: (num(e["ts"]), num(e["ts"]) + num(e.get("dur", 0)))
          for e in tev if e.get("ph") == "X" and e.get("cat") == "user_annotation"
          and e.get("name") in ("first_conv", "second_conv")}
check("first_conv" in ranges and "second_conv" in ranges, f"the profiler's first_conv/second_conv ranges: {ranges}")
kernels = sorted((num(e["ts"]), e["name"]) for e in tev if e.get("cat") == "kernel")
conv_words = ("cudnn", "conv", "xmma", "implicit", "fprop", "cutlass", "wgrad", "dgrad", "winograd")
conv_k = [k for k in kernels if any(w in k[1].lower() for w in conv_words)]
first_k = (conv_k or kernels or [(None, None)])[0]
print(f"      first convolution kernel: {first_k[1]!r:.90} at ts {first_k[0]}")

mine = [e for e in doc["traceEvents"] if e.get("ph") in ("i", "X") and e.get("pid") == pid]
sub = [e for e in mine if e["name"].startswith("load libcudnn_")]
print(f"      {len(sub)} cuDNN sub-library loads in the trace")
tol = 500.0  # us: the header offset's uncertainty
if "first_conv" in ranges:
    a, b = ranges["first_conv"]
    inside = [e for e in sub if a - tol <= num(e["ts"]) <= b + tol]
    check(len(inside) > 0, f"cuDNN sub-library loads inside first_conv [{a:.3f}, {b:.3f}] (+-0.5 ms): {len(inside)}")
    if first_k[0] is not None and inside:
        last = max(num(e["ts"]) for e in inside)
        check(last <= first_k[0] + tol, f"the loads ({last:.3f}) precede the first conv kernel ({first_k[0]:.3f}) by {first_k[0]-last:.1f} us")
if "second_conv" in ranges:
    a, b = ranges["second_conv"]
    late = [e["name"] for e in sub if a + tol < num(e["ts"]) < b - tol]
    check(not late, f"no cuDNN sub-library load inside second_conv: {late}")

# Where each of our events in the window lands: the innermost CPU op of the
# same thread containing it.
ops = [e for e in tev if e.get("ph") == "X" and e.get("pid") == pid and e.get("cat") in ("cpu_op", "user_annotation")]
lo = min((r[0] for r in ranges.values()), default=0)
hi = max((r[1] for r in ranges.values()), default=0)
print("\n      our events inside the profiler's window (ts us, event, innermost profiler op on the thread):")
for e in sorted(mine, key=lambda e: num(e["ts"])):
    t = num(e["ts"])
    if not (lo - tol <= t <= hi + tol):
        continue
    enclosing = [o for o in ops if o.get("tid") == e["tid"] and num(o["ts"]) <= t <= num(o["ts"]) + num(o.get("dur", 0))]
    inner = min(enclosing, key=lambda o: num(o.get("dur", 0)))["name"] if enclosing else "-"
    print(f"      {t:18.3f}  {e['name'][:60]:60}  {inner}")
before_window = [e for e in sub if num(e["ts"]) < lo - tol]
print(f"\n      cuDNN sub-library loads before the window (import, warm-up): {len(before_window)}")
print("\n=================== overall:", "PASS" if not fail else "FAIL: " + "; ".join(fail))
sys.exit(1 if fail else 0)
PY
