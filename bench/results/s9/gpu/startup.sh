#!/usr/bin/env bash
# Start-up of the launcher on the GPU host: interleaved, bare against traced.
set -u
py=python3
$py -m pip install -q --no-deps --no-index target/dist/cudnn_trace-*.whl > $OUT/pip.log 2>&1; echo "pip rc=$?"
B=$($py -c 'import cudnn_trace; print(cudnn_trace.binary())')
echo "binary: $B $($B --version | head -1)"
{ uname -r; nproc; grep -m1 "model name" /proc/cpuinfo; ldd --version | head -1; $py --version; which perf hyperfine; } 2>&1
$B -q --out /tmp/warm /bin/true; echo "warm rc=$?"
cd bench/tools
$py compare.py --runs 400 --warmup 10 --json $OUT/true.json :: bare /bin/true :: quiet $B -q --out {tmp}/t /bin/true :: summary $B --out {tmp}/t /bin/true :: version $B --version 2>&1 | tail -12
$py compare.py --runs 150 --warmup 5 --json $OUT/py.json :: bare $py -c pass :: quiet $B -q --out {tmp}/t $py -c pass :: summary $B --out {tmp}/t $py -c pass 2>&1 | tail -10
