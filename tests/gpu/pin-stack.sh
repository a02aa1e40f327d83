#!/usr/bin/env bash
# The cuDNN pin on the GPU machine (docs/pin.md). PyTorch and JAX with their pip
# cuDNN 9.19 and a system cuDNN 9.14 in /usr/lib/x86_64-linux-gnu:
#   1. validate a copy of the pip cuDNN directory with `cudnn-trace env --pin`;
#   2. pin PyTorch and JAX to the copy (through the launcher): the convolutions
#      succeed and every cuDNN file comes from the copy (check_pin.py reads the
#      raw trace and, in the program itself, /proc/self/maps);
#   3. the same with the system directory first on LD_LIBRARY_PATH: the pin wins;
#   4. production style, no launcher: LD_AUDIT + CUDNN_TRACE_PIN only;
#   5. pin to the system cuDNN 9.14: PyTorch raises its own version error and the
#      summary explains it as the pin's effect.
#
# usage: tests/gpu/pin-stack.sh [CUDNN_TRACE_BINARY] [OUT_DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$(readlink -f "${1:-target/release/cudnn-trace}")
out=${2:-${OUT:-/tmp/cudnn-trace-pin-stack}}
mkdir -p "$out"
py=${PYTHON:-python3}
fail=0
pip_dir=$("$py" -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))')
sys_dir=/usr/lib/x86_64-linux-gnu
copy=$out/cudnn-9.19-copy
rm -rf "$copy"; mkdir -p "$copy"
cp -a "$pip_dir"/libcudnn* "$copy"/
echo "pip cuDNN: $pip_dir -> copy $copy ($(du -sh "$copy" | cut -f1))"

echo "=================== env --pin (validation of the copy)"
"$bin" env --pin "$copy" --shim "$out/libcdtrace.so"; echo "env rc=$?"
echo "=================== env --pin of the system directory"
"$bin" env --pin "$sys_dir" >/dev/null; echo "env rc=$?"

pinned() { # name expect_rc pin_dir script [env...]
  local name=$1 expect=$2 dir=$3 script=$4; shift 4
  echo "=================== $name"
  env "$@" PYTHONUNBUFFERED=1 CDT_PRINT_MAPS=1 timeout 300 "$bin" --out "$out/$name.trace" --pin "$dir" -- \
      "$py" "$here/$script" >"$out/$name.out" 2>"$out/$name.err"
  local rc=$?
  echo "rc=$rc (expected $expect)"; cat "$out/$name.out"
  [ "$rc" = "$expect" ] || { echo "UNEXPECTED EXIT STATUS"; fail=1; }
  "$py" "$here/check_pin.py" "$out/$name.trace" "$dir" "$out/$name.out" || fail=1
  echo "--- launcher summary (stderr, without framework log lines, last 45 lines)"
  grep -v '^W0000\|^I0000\|^E0000' "$out/$name.err" | tail -45
}
pinned torch-pin-copy 0 "$copy" torch_conv.py
pinned jax-pin-copy 0 "$copy" jax_conv.py
pinned torch-pin-copy-ldpath 0 "$copy" torch_conv.py LD_LIBRARY_PATH="$sys_dir:${LD_LIBRARY_PATH:-}"
pinned jax-pin-copy-ldpath 0 "$copy" jax_conv.py LD_LIBRARY_PATH="$sys_dir:${LD_LIBRARY_PATH:-}"

echo "=================== torch, production style (LD_AUDIT + CUDNN_TRACE_PIN, no launcher, no trace)"
LD_AUDIT="$out/libcdtrace.so" CUDNN_TRACE_PIN="$copy" CDT_PRINT_MAPS=1 PYTHONUNBUFFERED=1 \
    timeout 300 "$py" "$here/torch_conv.py" >"$out/torch-env.out" 2>"$out/torch-env.err"
rc=$?; echo "rc=$rc"; cat "$out/torch-env.out"; tail -5 "$out/torch-env.err"
[ "$rc" = 0 ] || fail=1
"$py" "$here/check_pin.py" - "$copy" "$out/torch-env.out" || fail=1

echo "=================== torch pinned to the system cuDNN 9.14 (PyTorch must refuse it)"
PYTHONUNBUFFERED=1 timeout 300 "$bin" --out "$out/torch-pin-system.trace" --pin "$sys_dir" -- \
    "$py" "$here/torch_conv.py" >"$out/torch-pin-system.out" 2>"$out/torch-pin-system.err"
rc=$?; echo "rc=$rc (expected non-zero)"
[ "$rc" != 0 ] || { echo "PyTorch accepted cuDNN 9.14?"; fail=1; }
grep -q "cuDNN version incompatibility" "$out/torch-pin-system.err" || { echo "no PyTorch version error"; fail=1; }
grep -o "cuDNN version incompatibility: [^.]*" "$out/torch-pin-system.err" | head -1
"$py" "$here/check_pin.py" "$out/torch-pin-system.trace" "$sys_dir" || fail=1
echo "--- launcher summary"
sed -n '/^cudnn-trace: /,$p' "$out/torch-pin-system.err" | tail -40
echo "=================== report of that run"
"$bin" report "$out/torch-pin-system.trace" 2>&1 | head -30
echo "=================== jax pinned to the system cuDNN 9.14"
PYTHONUNBUFFERED=1 timeout 300 "$bin" --out "$out/jax-pin-system.trace" --pin "$sys_dir" -- \
    "$py" "$here/jax_conv.py" >"$out/jax-pin-system.out" 2>"$out/jax-pin-system.err"
echo "rc=$?"; cat "$out/jax-pin-system.out"
grep -i "cudnn" "$out/jax-pin-system.err" | grep -v '^ ' | head -8
"$py" "$here/check_pin.py" "$out/jax-pin-system.trace" "$sys_dir" || fail=1
echo "=================== overall: $([ $fail = 0 ] && echo PASS || echo FAIL)"
exit $fail
