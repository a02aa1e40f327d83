#!/usr/bin/env bash
# Real-stack check on the GPU machine (PyTorch, JAX, CuPy with the pip cuDNN 9.19
# and a system cuDNN 9.14 present). Runs each program bare and under cudnn-trace and
# checks: identical stdout and exit status; the trace lists the pip cuDNN files with
# their reasons, libcudart.so.13 and libcuda.so.1; no file of the system cuDNN.
#
# usage: tests/gpu/real-stack.sh [CUDNN_TRACE_BINARY] [OUT_DIR]
# (binary default: target/release/cudnn-trace, built on an x86_64 glibc >= 2.35 machine)
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-target/release/cudnn-trace}
out=${2:-${OUT:-/tmp/cudnn-trace-real-stack}}
mkdir -p "$out"
py=${PYTHON:-python3}
fail=0
run_one() { # name script [--expect-cudnn]
  local name=$1 script=$2; shift 2
  echo "=================== $name"
  PYTHONUNBUFFERED=1 timeout 300 "$py" "$here/$script" >"$out/$name.bare.out" 2>"$out/$name.bare.err"; local rc_bare=$?
  local t0=$(date +%s.%N)
  PYTHONUNBUFFERED=1 timeout 300 "$bin" --out "$out/$name.trace" -- "$py" "$here/$script" >"$out/$name.traced.out" 2>"$out/$name.traced.err"; local rc_traced=$?
  echo "bare:   rc=$rc_bare  $(cat "$out/$name.bare.out")"
  echo "traced: rc=$rc_traced  $(cat "$out/$name.traced.out")"
  if [ "$rc_bare" != "$rc_traced" ] || ! cmp -s "$out/$name.bare.out" "$out/$name.traced.out"; then
    echo "MISMATCH between bare and traced run"; fail=1
    diff "$out/$name.bare.out" "$out/$name.traced.out" | head -20
    tail -20 "$out/$name.traced.err"
  fi
  "$py" "$here/check_trace.py" "$out/$name.trace" "$name" "$@" || fail=1
  echo "--- launcher summary (stderr of the traced run, last 60 lines)"
  grep -v '^W0000\|^I0000' "$out/$name.traced.err" | tail -60
}
echo "host: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null) glibc $(ldd --version | head -1 | awk '{print $NF}')"
run_one torch torch_conv.py --expect-cudnn --expect-calls
run_one jax jax_conv.py --expect-cudnn
run_one cupy cupy_call.py --static-cudart
echo "=================== overall: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
