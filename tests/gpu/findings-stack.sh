#!/usr/bin/env bash
# Issue 3 on the GPU machine: the findings for real PyTorch and JAX runs.
#   1. the clean runs (real-stack.sh checks versions and calls): findings listed;
#   2. the system cuDNN 9.14 directory first on LD_LIBRARY_PATH: what does the
#      report say? (PyTorch's DT_RPATH finds the pip dispatcher; the dispatcher's
#      sub-libraries are searched by name, where LD_LIBRARY_PATH comes before its
#      RUNPATH.)
# usage: tests/gpu/findings-stack.sh [CUDNN_TRACE_BINARY] [OUT_DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$(readlink -f "${1:-target/release/cudnn-trace}")
out=${2:-${OUT:-/tmp/cudnn-trace-findings}}
mkdir -p "$out"
py=${PYTHON:-python3}
sys_dir=/usr/lib/x86_64-linux-gnu
one() { # name script [env...]
  local name=$1 script=$2; shift 2
  echo "=================== $name ${*:-}"
  env "$@" PYTHONUNBUFFERED=1 timeout 300 "$bin" --out "$out/$name.trace" -- "$py" "$here/$script" \
      >"$out/$name.out" 2>"$out/$name.err"
  echo "rc=$?"; cat "$out/$name.out"
  echo "--- program's own cuDNN messages (stderr)"
  grep -i "cudnn" "$out/$name.err" | grep -v '^ \|^cudnn-trace\|^  ' | head -6
  echo "--- report findings"
  "$bin" report "$out/$name.trace" 2>/dev/null | sed -n '/^cudnn-trace: \([0-9]* \(error\|warning\|info\)\|clean\)/,$p'
  echo "--- report --json: codes"
  "$bin" report --json "$out/$name.trace" 2>/dev/null |
    "$py" -c 'import json,sys; d=json.load(sys.stdin); print(d["findings_total"], sorted({f["code"] for p in d["processes"] for f in p["findings"]}))'
  "$bin" report --fail-on error "$out/$name.trace" >/dev/null 2>&1; echo "report --fail-on error: rc=$?"
}
one torch-clean torch_conv.py
one jax-clean jax_conv.py
one torch-sys-first torch_conv.py LD_LIBRARY_PATH="$sys_dir:${LD_LIBRARY_PATH:-}"
one jax-sys-first jax_conv.py LD_LIBRARY_PATH="$sys_dir:${LD_LIBRARY_PATH:-}"
