#!/usr/bin/env bash
# Session 10 device run: report scaling (full), start-up split, floor split.
set -u
B=${B:-target/release/cudnn-trace}
echo "== host"; { uname -r; nproc; grep -m1 "model name" /proc/cpuinfo; ldd --version | head -1; python3 --version; free -g | head -2; } 2>&1
$B --version | head -1
if [ "${DO_SPLIT:-1}" = 1 ]; then
S=$(dirname "$($B -q --out /tmp/envp -- env | sed -n 's/^LD_AUDIT=//p')")
echo "shim dir: $S"
echo "== floor split, /bin/true, 400 rounds"
mkdir -p /tmp/o3
python3 bench/tools/compare.py --runs 400 --warmup 10 --json $OUT/split.json :: bare /bin/true :: env env /bin/true :: floorlibc env LD_AUDIT=$PWD/target/fl/cb.so /bin/true :: floornolibc env LD_AUDIT=$PWD/target/fl/cbn.so /bin/true :: auditonly env CUDNN_TRACE_DIR=/tmp/o3 CUDNN_TRACE_MODE=cuda CUDNN_TRACE_SHIM=$S/libcdtrace.so LD_AUDIT=$S/libcdtrace.so /bin/true :: shim env CUDNN_TRACE_DIR=/tmp/o3 CUDNN_TRACE_MODE=cuda CUDNN_TRACE_SHIM=$S/libcdtrace.so LD_AUDIT=$S/libcdtrace.so LD_PRELOAD=$S/libcdtrace_preload.so /bin/true :: quiet $B -q --out {tmp}/t /bin/true :: version $B --version ${EXTRA:+:: $EXTRA} 2>&1 | tail -12
rm -rf /tmp/o3
fi
if [ "${DO_REPORT:-1}" = 1 ]; then
echo "== report (suite, full)"
time python3 bench/tools/suite.py --mode full --root . --build target/bench --cli $B --out $OUT/res --only report --command "bench/run.sh --full --only report (H100 host, session 10)" 2>&1 | tail -45
fi
if [ "${DO_GPU:-1}" = 1 ]; then
echo "== gpu.sh start-up"
STARTUP_RUNS=${STARTUP_RUNS:-200} RUNS=0 COUNT_RUNS=0 SCRIPTS=none.py bash bench/gpu.sh $B $OUT/gpu 2>&1 | tail -30
fi
