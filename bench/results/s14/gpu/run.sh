#!/usr/bin/env bash
# Session 14 device run (the GPU machine), from the repository root, with the
# release binary of this session (NEW: non-PIE static, no Rust runtime start)
# and the one it replaced (OLD, the release build of 9c1ea5e), both carried in
# target/.
#   PART=checks   the GPU checks of tests/gpu with NEW (logs into $OUT)
#   PART=startup  /bin/true bare, under a do-nothing launcher process with the
#                 shim (spawn_floor, built here and carried), and under OLD and
#                 NEW with and without the summary, in the same interleaved rounds
#   PART=python   python3 -c pass the same way (bare, shim alone, floor, OLD, NEW)
set -u
NEW=${NEW:-target/release-static/dist/cudnn-trace}
OLD=${OLD:-target/s14/old-cudnn-trace}
FLOOR=${FLOOR:-target/s14/spawn_floor}
OUT=${OUT:-/tmp/s14-out}
mkdir -p "$OUT"
host() { { uname -r; nproc; grep -m1 "model name" /proc/cpuinfo; ldd --version | head -1; python3 --version
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; df -T /tmp | tail -1; } 2>&1; }
case ${PART:-checks} in
checks)
  host >"$OUT/host.txt"; "$NEW" version >>"$OUT/host.txt" 2>&1
  for s in real-stack side-effects findings-stack pin-stack report-versions; do
    start=$(date +%s)
    timeout "${EACH_S:-110}" bash "tests/gpu/$s.sh" "$NEW" "/tmp/s14/$s" >"$OUT/$s.log" 2>&1
    echo "$s: rc=$? in $(( $(date +%s) - start )) s"
  done ;;
startup)
  host >"$OUT/host.txt"
  d=$(mktemp -d); "$NEW" -q --out "$d/t" -- env >"$d/env" 2>/dev/null
  shimenv=(CUDNN_TRACE_MODE=cuda $(grep -E '^(LD_AUDIT|LD_PRELOAD|CUDNN_TRACE_SHIM)=' "$d/env"))
  python3 bench/tools/compare.py --runs "${RUNS:-300}" --warmup 5 --keep-tmp --json "$OUT/startup-paired.json" \
    :: bare /bin/true \
    :: floor env CUDNN_TRACE_DIR='{tmp}' "${shimenv[@]}" "$FLOOR" /bin/true \
    :: old-q "$OLD" -q --out '{tmp}/t' -- /bin/true \
    :: new-q "$NEW" -q --out '{tmp}/t' -- /bin/true \
    :: old "$OLD" --out '{tmp}/t' -- /bin/true \
    :: new "$NEW" --out '{tmp}/t' -- /bin/true 2>&1 | tee "$OUT/startup-paired.txt" | tail -12 ;;
python)
  # The same for `python3 -c pass` (PY: the interpreter), summary on.
  py=${PY:-$(command -v python3)}
  d=$(mktemp -d); "$NEW" -q --out "$d/t" -- env >"$d/env" 2>/dev/null
  shimenv=(CUDNN_TRACE_MODE=cuda $(grep -E '^(LD_AUDIT|LD_PRELOAD|CUDNN_TRACE_SHIM)=' "$d/env"))
  python3 bench/tools/compare.py --runs "${RUNS:-100}" --warmup 3 --keep-tmp --json "$OUT/python-paired.json" \
    :: bare "$py" -c pass \
    :: shim env CUDNN_TRACE_DIR='{tmp}' "${shimenv[@]}" "$py" -c pass \
    :: floor env CUDNN_TRACE_DIR='{tmp}' "${shimenv[@]}" "$FLOOR" "$py" -c pass \
    :: old "$OLD" --out '{tmp}/t' -- "$py" -c pass \
    :: new "$NEW" --out '{tmp}/t' -- "$py" -c pass 2>&1 | tee "$OUT/python-paired.txt" | tail -8
  echo "python: $py" ;;
esac
