#!/usr/bin/env bash
# Session 15 device run (the GPU machine), from the repository root, with the
# release binary of this session (NEW: a file's header parsed straight into
# its type, class keys written field by field) and the one it replaced (OLD,
# the release build of 401302b), both carried in target/.
#   the GPU checks of tests/gpu with NEW (logs into $OUT), then `report` and
#   `report --json` of every trace they left, by OLD and by NEW: the outputs
#   must be the same byte for byte (real PyTorch, JAX and CuPy traces), and
#   the time of each, OLD and NEW in turn.
set -u
NEW=${NEW:-target/release-static/dist/cudnn-trace}
OLD=${OLD:-target/s15/old-cudnn-trace}
OUT=${OUT:-/tmp/s15-out}
mkdir -p "$OUT"
{ uname -r; nproc; grep -m1 "model name" /proc/cpuinfo; ldd --version | head -1; python3 --version
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$OUT/host.txt" 2>&1
"$NEW" version >>"$OUT/host.txt" 2>&1
for s in real-stack side-effects findings-stack pin-stack report-versions; do
  start=$(date +%s)
  timeout "${EACH_S:-110}" bash "tests/gpu/$s.sh" "$NEW" "/tmp/s15/$s" >"$OUT/$s.log" 2>&1
  echo "$s: rc=$? in $(( $(date +%s) - start )) s"
done
same=0 differ=0
while IFS= read -r d; do
  for f in "" --json; do
    a=$("$OLD" report $f "$d" 2>&1; echo "rc=$?")
    b=$("$NEW" report $f "$d" 2>&1; echo "rc=$?")
    if [ "$a" = "$b" ]; then same=$((same + 1)); else differ=$((differ + 1)); echo "DIFFER: $d $f"; fi
  done
done < <(find /tmp/s15 -name launcher.json -printf '%h\n' | sort -u)
echo "report outputs: $same the same, $differ different (OLD vs NEW)"
