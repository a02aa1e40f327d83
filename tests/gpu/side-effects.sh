#!/usr/bin/env bash
# Issue 14, items 1 and 2, against the real cuDNN 9 wheel (no GPU needed; on the
# GPU machine its pip cuDNN is used). A stub libcuda.so.1 (the fake driver of
# tests/fixtures, which logs its constructor, cuInit and cuDriverGetVersion to
# $FAKE_CUDA_LOG) comes first on LD_LIBRARY_PATH; a Python program ctypes-loads
# the wheel's libcudnn.so.9, calls cudnnGetVersion, then loads libcudnn_ops.so.9
# (the issue's reproduction), probing libgcc_s.so.1 first and libcuda.so.1 last
# with RTLD_NOLOAD. Bare and traced (the launcher, --all) must print the same: no
# driver loaded or initialised behind the program's back, no libgcc_s.
#
# usage: tests/gpu/side-effects.sh [CUDNN_TRACE_BINARY] [OUT_DIR] [CUDNN_LIB_DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
bin=$(readlink -f "${1:-target/release/cudnn-trace}")
out=${2:-${OUT:-/tmp/cudnn-trace-side-effects}}
py=${PYTHON:-python3}
lib=${3:-$("$py" -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))')}
mkdir -p "$out"
bash "$here/../fixtures/build-stack.sh" cuda "$out/stub" --driver 580.159.04 --cuda 13.0 >/dev/null || exit 2
cat >"$out/repro.py" <<'PY'
import ctypes, os, sys
d = sys.argv[1]
log = os.environ["FAKE_CUDA_LOG"]
if os.path.exists(log):
    os.unlink(log)
def probe(name):
    try:
        ctypes.CDLL(name, mode=os.RTLD_NOLOAD)
        print(name, "loaded")
    except OSError:
        print(name, "not loaded")
probe("libgcc_s.so.1")  # before cuDNN, which brings it (C++)
c = ctypes.CDLL(os.path.join(d, "libcudnn.so.9"))
c.cudnnGetVersion.restype = ctypes.c_size_t
print("cudnnGetVersion", c.cudnnGetVersion())
ctypes.CDLL(os.path.join(d, "libcudnn_ops.so.9"))
probe("libcuda.so.1")
print("driver log:", open(log).read().split() if os.path.exists(log) else [])
PY
export LD_LIBRARY_PATH="$out/stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKE_CUDA_LOG="$out/driver.log"
"$py" "$out/repro.py" "$lib" >"$out/bare.out" 2>&1; rc_bare=$?
rm -rf "$out/trace"
"$bin" -q --all --out "$out/trace" -- "$py" "$out/repro.py" "$lib" >"$out/traced.out" 2>"$out/traced.err"; rc_traced=$?
echo "bare   (rc $rc_bare):";   sed 's/^/  /' "$out/bare.out"
echo "traced (rc $rc_traced):"; sed 's/^/  /' "$out/traced.out"
if [ "$rc_bare" = "$rc_traced" ] && cmp -s "$out/bare.out" "$out/traced.out" \
    && grep -q "libcuda.so.1 not loaded" "$out/bare.out" \
    && grep -q "libgcc_s.so.1 not loaded" "$out/bare.out"; then
    echo "side-effects: PASS"
else
    echo "side-effects: FAIL"; exit 1
fi
