#!/usr/bin/env bash
# Session 11 device run: the GPU checks with this build, then the launcher's
# start-up before (base) and after (this build), paired, trace dirs kept.
set -u
B=$PWD/target/release/cudnn-trace
O=$PWD/target/base-cudnn-trace
echo "== host"; { uname -r; nproc; ldd --version | head -1; python3 --version; df -T /tmp . | tail -2; } 2>&1
bash target/gpu-check.sh
mkdir -p $OUT/s11
echo "== /bin/true, 400 rounds, trace dirs kept"
python3 bench/tools/compare.py --keep-tmp --runs 400 --warmup 10 --json $OUT/s11/true-kept.json :: bare /bin/true :: old_sum $O -o {tmp}/t /bin/true :: new_sum $B -o {tmp}/t /bin/true :: old_q $O -q -o {tmp}/t /bin/true :: new_q $B -q -o {tmp}/t /bin/true 2>&1 | tail -6
echo "== /bin/true, 300 rounds, one parent accumulating runs (as ./cudnn-trace-out does)"
mkdir -p /tmp/acc
python3 bench/tools/compare.py --runs 300 --warmup 10 --json $OUT/s11/true-acc.json :: bare /bin/true :: old_sum $O -o /tmp/acc/o-%p /bin/true :: new_sum $B -o /tmp/acc/n-%p /bin/true :: old_q $O -q -o /tmp/acc/oq-%p /bin/true :: new_q $B -q -o /tmp/acc/nq-%p /bin/true 2>&1 | tail -6
rm -rf /tmp/acc
echo "== python3 -c pass, 100 rounds"
python3 bench/tools/compare.py --keep-tmp --runs 100 --warmup 3 --json $OUT/s11/python.json :: bare python3 -c pass :: old_q $O -q -o {tmp}/t python3 -c pass :: new_q $B -q -o {tmp}/t python3 -c pass :: new_sum $B -o {tmp}/t python3 -c pass 2>&1 | tail -5
