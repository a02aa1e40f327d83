#!/usr/bin/env bash
# Session 16 device run (the GPU machine), from the repository root, with the
# release binary of this session (NEW: its hot functions laid out together,
# cli/build.rs) and the one it replaced (OLD, the release build of 5456916),
# both carried in target/.
#   PART=checks   the GPU checks of tests/gpu with NEW (logs into $OUT)
#   PART=startup  /bin/true bare, with the shim alone, under a do-nothing
#                 launcher process with the shim (spawn_floor, built here and
#                 carried), and under OLD and NEW with and without the summary,
#                 in the same interleaved rounds. The shim's variables are set
#                 by compare.py itself (VAR=VALUE words), not through env(1):
#                 session 14's floor here ran through env, whose own exec
#                 counted as the floor's.
#   PART=python   python3 -c pass the same way (bare, shim alone, floor, OLD, NEW)
set -u
NEW=${NEW:-target/release-static/dist/cudnn-trace}
OLD=${OLD:-target/s16/old-cudnn-trace}
FLOOR=${FLOOR:-target/s16/spawn_floor}
OUT=${OUT:-/tmp/s16-out}
mkdir -p "$OUT"
host() { { uname -r; nproc; grep -m1 "model name" /proc/cpuinfo; ldd --version | head -1; python3 --version
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; df -T /tmp | tail -1; } 2>&1; }
shim_env() {
  local d
  d=$(mktemp -d); "$NEW" -q --out "$d/t" -- env >"$d/env" 2>/dev/null
  shimenv=(CUDNN_TRACE_MODE=cuda $(grep -E '^(LD_AUDIT|LD_PRELOAD|CUDNN_TRACE_SHIM)=' "$d/env") CUDNN_TRACE_DIR='{tmp}')
}
case ${PART:-checks} in
checks)
  host >"$OUT/host.txt"; "$NEW" version >>"$OUT/host.txt" 2>&1
  for s in real-stack side-effects findings-stack pin-stack report-versions; do
    start=$(date +%s)
    timeout "${EACH_S:-110}" bash "tests/gpu/$s.sh" "$NEW" "/tmp/s16/$s" >"$OUT/$s.log" 2>&1
    echo "$s: rc=$? in $(( $(date +%s) - start )) s"
  done ;;
startup)
  host >"$OUT/host.txt"
  shim_env
  python3 bench/tools/compare.py --runs "${RUNS:-300}" --warmup 5 --keep-tmp --json "$OUT/startup-paired.json" \
    :: bare /bin/true \
    :: shim "${shimenv[@]}" /bin/true \
    :: floor "${shimenv[@]}" "$FLOOR" /bin/true \
    :: old-q "$OLD" -q --out '{tmp}/t' -- /bin/true \
    :: new-q "$NEW" -q --out '{tmp}/t' -- /bin/true \
    :: old "$OLD" --out '{tmp}/t' -- /bin/true \
    :: new "$NEW" --out '{tmp}/t' -- /bin/true 2>&1 | tee "$OUT/startup-paired.txt" | tail -12 ;;
python)
  py=${PY:-$(command -v python3)}
  shim_env
  python3 bench/tools/compare.py --runs "${RUNS:-100}" --warmup 3 --keep-tmp --json "$OUT/python-paired.json" \
    :: bare "$py" -c pass \
    :: shim "${shimenv[@]}" "$py" -c pass \
    :: floor "${shimenv[@]}" "$FLOOR" "$py" -c pass \
    :: old "$OLD" --out '{tmp}/t' -- "$py" -c pass \
    :: new "$NEW" --out '{tmp}/t' -- "$py" -c pass 2>&1 | tee "$OUT/python-paired.txt" | tail -8
  echo "python: $py" ;;
esac
