#!/usr/bin/env bash
# Session 11: where the launcher's time goes on the H100 host (strace -T, perf if present).
set -u
B=$PWD/target/release/cudnn-trace
S="/lib64/ld-linux-x86-64.so.2 --library-path $PWD/target/st $PWD/target/st/strace"; $S -V | head -1
R0=$PWD; mkdir -p /tmp/w; cd /tmp/w
for i in 1 2 3; do $B -q -o /tmp/w/warm$i /bin/true; done
$S -f -tt -T -o $OUT/launcher.strace $B -q -o /tmp/w/t1 /bin/true
$S -f -c -o $OUT/launcher.count $B -q -o /tmp/w/t2 /bin/true
echo "== slowest syscalls"
sed -E 's/.*<([0-9.]+)>$/\1 &/' $OUT/launcher.strace | grep -E "^[0-9]" | sort -rn | head -25 | cut -c1-200
echo "== counts"; head -30 $OUT/launcher.count
if which perf >/dev/null 2>&1; then
  perf stat -r 200 -e task-clock,page-faults,context-switches,cpu-migrations $B -q -o /tmp/w/p%p /bin/true 2>&1 | tail -12
  perf stat -r 200 -e task-clock,page-faults,context-switches,cpu-migrations /bin/true 2>&1 | tail -12
fi
cd /root 2>/dev/null || cd /
R=$R0
echo "== trace dir on ext4 (/tmp) vs tmpfs (/dev/shm), 300 rounds, kept"
df -T /tmp /dev/shm | tail -2
mkdir -p /tmp/k /dev/shm/k
python3 $R/bench/tools/compare.py --runs 300 --warmup 10 :: bare /bin/true :: ext4 $B -q -o /tmp/k/%p /bin/true :: tmpfs $B -q -o /dev/shm/k/%p /bin/true :: version $B --version 2>&1 | tail -5
rm -rf /tmp/k /dev/shm/k
