#!/usr/bin/env bash
# Session 12 device run (the GPU machine), from the repository root, with the
# static release binary of this session (NEW) and main's zig build before it
# (OLD), both carried in target/.
#   PART=checks  the GPU checks of tests/gpu with NEW (logs into $OUT)
#   PART=bench   bench/gpu.sh with NEW (the PyTorch/JAX figure, its start-up
#                section), then OLD and NEW side by side on /bin/true and
#                `python3 -c pass` (paired, same rounds)
set -u
NEW=${NEW:-target/release-static/dist/cudnn-trace}
OLD=${OLD:-target/release-2.17/dist/cudnn-trace}
OUT=${OUT:-/tmp/s12-out}
mkdir -p "$OUT"
host() { { uname -r; nproc; grep -m1 "model name" /proc/cpuinfo; ldd --version | head -1; python3 --version
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; df -T /tmp | tail -1; } 2>&1; }
case ${PART:-checks} in
checks)
  host >"$OUT/host.txt"; "$NEW" version >>"$OUT/host.txt" 2>&1
  for s in real-stack side-effects findings-stack pin-stack report-versions; do
    start=$(date +%s)
    timeout "${EACH_S:-200}" bash "tests/gpu/$s.sh" "$NEW" "/tmp/s12/$s" >"$OUT/$s.log" 2>&1
    echo "$s: rc=$? in $(( $(date +%s) - start )) s"
  done ;;
bench)
  host >"$OUT/host.txt"
  RUNS=${RUNS:-12} COUNT_RUNS=0 STARTUP_RUNS=${STARTUP_RUNS:-300} bash bench/gpu.sh "$NEW" /tmp/s12/gpu >"$OUT/gpu-bench.log" 2>&1
  echo "gpu.sh: rc=$?"
  py=$(python3 -c 'import sys; print(sys.executable)')
  python3 bench/tools/compare.py --runs "${PAIRED_RUNS:-300}" --warmup 10 --keep-tmp --json /tmp/s12/gpu/paired-true.json \
    :: bare /bin/true :: old_q "$OLD" -q --out '{tmp}/t' -- /bin/true :: new_q "$NEW" -q --out '{tmp}/t' -- /bin/true \
    :: old_sum "$OLD" --out '{tmp}/t' -- /bin/true :: new_sum "$NEW" --out '{tmp}/t' -- /bin/true >"$OUT/paired.log" 2>&1
  python3 bench/tools/compare.py --runs "${PY_RUNS:-100}" --warmup 5 --keep-tmp --json /tmp/s12/gpu/paired-python.json \
    :: bare "$py" -c pass :: old_q "$OLD" -q --out '{tmp}/t' -- "$py" -c pass :: new_q "$NEW" -q --out '{tmp}/t' -- "$py" -c pass \
    :: old_sum "$OLD" --out '{tmp}/t' -- "$py" -c pass :: new_sum "$NEW" --out '{tmp}/t' -- "$py" -c pass >>"$OUT/paired.log" 2>&1
  tar -C /tmp/s12/gpu -czf "$OUT/gpu-json.tgz" $(cd /tmp/s12/gpu && ls *.json)
  tail -40 "$OUT/paired.log" ;;
esac
