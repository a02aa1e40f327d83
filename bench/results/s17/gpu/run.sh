#!/usr/bin/env bash
# Session 17 device run (the GPU machine), from the repository root, with the
# release binary of this session carried in target/release-static/dist.
# bench/gpu.sh with PyTorch alone (JAX's figure is session 12's) and more
# rounds than before (RUNS, default 24: session 12's 12 rounds left each side
# spread over +-1 s of a 4 s process), its sides now set the shim's variables
# through compare.py's VAR=VALUE words instead of env(1), and its start-up
# section (/bin/true and `python3 -c pass`, 300 rounds each); the JSON and
# the log go to $OUT.
set -u
NEW=${NEW:-target/release-static/dist/cudnn-trace}
OUT=${OUT:-/tmp/s17-out}
mkdir -p "$OUT"
{ uname -r; nproc; grep -m1 "model name" /proc/cpuinfo; ldd --version | head -1; python3 --version
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; df -T /tmp | tail -1; } >"$OUT/host.txt" 2>&1
start=$(date +%s)
RUNS=${RUNS:-24} COUNT_RUNS=0 STARTUP_RUNS=${STARTUP_RUNS:-300} SCRIPTS=torch_conv.py \
  bash bench/gpu.sh "$NEW" /tmp/s17/gpu >"$OUT/gpu-bench.log" 2>&1
echo "gpu.sh: rc=$? in $(( $(date +%s) - start )) s"
cp /tmp/s17/gpu/*.json "$OUT/" 2>/dev/null
grep -v '^shim side' "$OUT/gpu-bench.log" | tail -30
