#!/usr/bin/env bash
# Session 17, third device run, with the final build of the session (NEW, in
# target/release-static/dist) and the one before its terminal changes (BASE,
# target/s17/ct-base: before H cloned the program and reaped itself early):
#   1. /bin/true in a terminal and to a file (compare.py --terminal), BASE
#      and NEW in the same 200 rounds, on a host with more processes than
#      the VM (the look at /proc read every one of them);
#   2. the five GPU checks of tests/gpu with NEW.
set -u
NEW=${NEW:-target/release-static/dist/cudnn-trace}
BASE=${BASE:-target/s17/ct-base}
OUT=${OUT:-/tmp/s17-out}
mkdir -p "$OUT"
echo "processes: $(ls -d /proc/[0-9]* | wc -l)" >"$OUT/host.txt"
for mode in --terminal ""; do
  python3 bench/tools/compare.py --runs "${RUNS:-200}" --warmup 5 --keep-tmp $mode \
    --json "$OUT/true${mode:---file}.json" \
    :: bare /bin/true \
    :: base-q "$BASE" -q --out '{tmp}/t' -- /bin/true \
    :: new-q "$NEW" -q --out '{tmp}/t' -- /bin/true \
    :: base "$BASE" --out '{tmp}/t' -- /bin/true \
    :: new "$NEW" --out '{tmp}/t' -- /bin/true 2>&1 | tee "$OUT/true${mode:---file}.txt" | tail -6
done
for s in real-stack side-effects findings-stack pin-stack report-versions; do
  start=$(date +%s)
  timeout "${EACH_S:-100}" bash "tests/gpu/$s.sh" "$NEW" "/tmp/s17/$s" >"$OUT/$s.log" 2>&1
  echo "$s: rc=$? in $(( $(date +%s) - start )) s"
done
