#!/usr/bin/env bash
set -u
B=$PWD/target/release/cudnn-trace
N=$(dirname "$($B -q --out /tmp/envp -- env | sed -n 's/^LD_AUDIT=//p')")
O=$PWD/target/oldshim
mkdir -p /tmp/o3
echo "== memory (memprobe), 5 each: TOTAL kB"
for i in 1 2 3 4 5; do
  echo "bare $(python3 target/smaps.py | tail -1)"
  echo "old  $(python3 target/smaps.py CUDNN_TRACE_DIR=/tmp/o3 CUDNN_TRACE_MODE=cuda LD_AUDIT=$O/libcdtrace.so LD_PRELOAD=$O/libcdtrace_preload.so | tail -1)"
  echo "new  $(python3 target/smaps.py CUDNN_TRACE_DIR=/tmp/o3 CUDNN_TRACE_MODE=cuda LD_AUDIT=$N/libcdtrace.so LD_PRELOAD=$N/libcdtrace_preload.so | tail -1)"
done
echo "== start-up, old and new shim, 400 rounds"
python3 bench/tools/compare.py --runs 400 --warmup 10 --json $OUT/trim-startup.json :: env env /bin/true :: old env CUDNN_TRACE_DIR=/tmp/o3 CUDNN_TRACE_MODE=cuda LD_AUDIT=$O/libcdtrace.so LD_PRELOAD=$O/libcdtrace_preload.so /bin/true :: new env CUDNN_TRACE_DIR=/tmp/o3 CUDNN_TRACE_MODE=cuda LD_AUDIT=$N/libcdtrace.so LD_PRELOAD=$N/libcdtrace_preload.so /bin/true 2>&1 | tail -4
rm -rf /tmp/o3
echo "== report (suite, full)"
time python3 bench/tools/suite.py --mode full --root . --build target/bench --cli $B --out $OUT/res --only report --command "bench/run.sh --full --only report (H100 host, session 10)" 2>&1 | tail -45
