#!/usr/bin/env bash
# Session 13 device run (the GPU machine), from the repository root, with the
# static release binary of this session (NEW, carried in target/), the shim
# with the reuse-table prefetch inside it.
#   PART=checks  the GPU checks of tests/gpu with NEW (logs into $OUT)
#   PART=heavy   the dlopen-heavy program (target/bench, built by bench/run.sh
#                here) bare, under the shim before the prefetch (OLDSHIM, the
#                shim and helper of a80efdc^) and under NEW's own shim, in the
#                same interleaved rounds
set -u
NEW=${NEW:-target/release-static/dist/cudnn-trace}
OLDSHIM=${OLDSHIM:-target/s13-oldshim}
OUT=${OUT:-/tmp/s13-out}
mkdir -p "$OUT"
host() { { uname -r; nproc; grep -m1 "model name" /proc/cpuinfo; ldd --version | head -1; python3 --version
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; df -T /tmp | tail -1; } 2>&1; }
case ${PART:-checks} in
checks)
  host >"$OUT/host.txt"; "$NEW" version >>"$OUT/host.txt" 2>&1
  for s in real-stack side-effects findings-stack pin-stack report-versions; do
    start=$(date +%s)
    timeout "${EACH_S:-110}" bash "tests/gpu/$s.sh" "$NEW" "/tmp/s13/$s" >"$OUT/$s.log" 2>&1
    echo "$s: rc=$? in $(( $(date +%s) - start )) s"
  done ;;
heavy)
  host >"$OUT/host.txt"
  d=$(mktemp -d); "$NEW" -q --out "$d/t" -- env >"$d/env" 2>/dev/null
  audit=$(sed -n 's/^LD_AUDIT=//p' "$d/env"); pre=$(sed -n 's/^LD_PRELOAD=//p' "$d/env")
  prog=(target/bench/bin/dlheavy target/bench/work/heavy-1000 1000 100000)
  python3 bench/tools/compare.py --runs "${RUNS:-30}" --warmup 2 --json "$OUT/heavy-paired.json" \
    :: bare "${prog[@]}" \
    :: old env CUDNN_TRACE_DIR='{tmp}' CUDNN_TRACE_MODE=cuda LD_AUDIT="$OLDSHIM/libcdtrace.so" LD_PRELOAD="$OLDSHIM/libcdtrace_preload.so" "${prog[@]}" \
    :: new env CUDNN_TRACE_DIR='{tmp}' CUDNN_TRACE_MODE=cuda LD_AUDIT="$audit" LD_PRELOAD="$pre" "${prog[@]}" 2>&1 | tee "$OUT/heavy-paired.txt" | tail -5
  echo "new shim: $audit" ;;
esac
