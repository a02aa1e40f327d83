#!/usr/bin/env bash
# Issue 14, CLI side, on the GPU machine (the real pip cuDNN 9.19, cudart 13, CuPy, the
# driver): what `report` finds outside the traced process (docs/report-versions.md).
# For PyTorch's convolution and CuPy, traced with the launcher (quiet), it runs
# `report --json` twice with a fresh cache directory (cold: probe processes; warm: the
# cache) and prints, per library, the version and where it came from, the static
# runtimes, the files not asked and the findings, and the time of each report. Checks:
#   - every cuDNN file of the wheel has a version of two or more parts (asked, requested
#     or package), the dispatcher's from the names it asked for;
#   - libcuda has a CUDA version (the program's call or asked);
#   - the warm report asked nothing (found.source never "asked");
#   - CuPy: cupy_backends/…/runtime….so carries a static runtime (nvidia false) with a
#     version from its pip package; cuDNN/cuBLASLt listed only as nvidia true;
#   - no error finding.
#
# usage: tests/gpu/report-versions.sh [CUDNN_TRACE_BINARY] [OUT_DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$(readlink -f "${1:-target/release/cudnn-trace}")
out=${2:-${OUT:-/tmp/cudnn-trace-report-versions}}
py=${PYTHON:-python3}
mkdir -p "$out"
fail=0
for name in torch_conv cupy_call; do
    echo "=================== $name"
    rm -rf "$out/$name.trace" "$out/$name.cache"
    PYTHONUNBUFFERED=1 timeout 300 "$bin" -q --out "$out/$name.trace" -- "$py" "$here/$name.py" \
        >"$out/$name.out" 2>"$out/$name.err" || { echo "run failed"; tail -5 "$out/$name.err"; fail=1; continue; }
    for pass in cold warm; do
        t0=$(date +%s%N)
        XDG_CACHE_HOME="$out/$name.cache" "$bin" report --json "$out/$name.trace" >"$out/$name.$pass.json" 2>"$out/$name.$pass.err"
        t1=$(date +%s%N)
        echo "report ($pass cache): $(((t1 - t0) / 1000000)) ms"
    done
    XDG_CACHE_HOME="$out/$name.cache" "$bin" report "$out/$name.trace" >"$out/$name.txt" 2>&1
    "$py" - "$out/$name.cold.json" "$out/$name.warm.json" "$name" <<'PY' || fail=1
import json, sys
cold, warm, name = (json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3])
bad = []
for p in cold["processes"]:
    for l in p["libraries"]:
        v, f = l.get("version") or {}, l.get("found") or {}
        print(f'  {l["family"]:9} {l["path"].split("/")[-1]:42} {v.get("kind","-"):10} {v.get("text","-"):28} {f.get("source","")} {f.get("detail","")}')
        if l["family"] == "cudnn" and "site-packages" in l["path"] and v.get("minor") is None:
            bad.append(f'no full version for {l["path"]}')
        if l["family"] == "cuda" and not l.get("stub") and "CUDA" not in (v.get("text") or ""):
            bad.append(f'no CUDA version for {l["path"]}')
    for r in p.get("static_runtimes", []):
        print(f'  static runtime: {r["path"]} nvidia={r["nvidia"]} version={(r["version"] or {}).get("text")} ({r["version_from"]})')
    for n in p.get("versions_not_asked", []):
        print(f'  not asked: {n["path"]}: {n["why"]}')
    for f in p["findings"]:
        print(f'  {f["severity"]} {f["code"]} {f["title"]}')
        if f["severity"] == "error":
            bad.append(f'error finding {f["code"]}')
if name == "cupy_call":
    cupy = [r for p in cold["processes"] for r in p.get("static_runtimes", []) if "cupy_backends" in r["path"]]
    if not any(not r["nvidia"] and r["version"] for r in cupy):
        bad.append("no CuPy static runtime with a version")
for p in warm["processes"]:
    for l in p["libraries"]:
        if (l.get("found") or {}).get("source") == "asked":
            bad.append(f'warm report asked {l["path"]} again')
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
    echo "--- text report: $out/$name.txt"
done
[ "$fail" = 0 ] && echo "report-versions: all checks passed" || echo "report-versions: FAILED"
exit "$fail"
