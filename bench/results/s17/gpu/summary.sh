#!/usr/bin/env bash
# Session 17, second device run: why the launcher's summary cost python3 -c
# pass 1.4 ms more than -q in run.sh's start-up section (+3.12 against +1.71
# ms, paired) when it costs /bin/true 0.13 ms. Keeps one traced run's
# directory, the launcher's own system calls (strace -c, when installed),
# and 200 paired rounds of -q, the summary and `report` of the kept run.
set -u
NEW=${NEW:-target/release-static/dist/cudnn-trace}
OUT=${OUT:-/tmp/s17-out}
mkdir -p "$OUT"
py=$(python3 -c 'import sys; print(sys.executable)')
"$NEW" --out "$OUT/kept" -- "$py" -c pass >"$OUT/kept-summary.txt" 2>&1
ls -la "$OUT/kept" >"$OUT/kept-ls.txt"; wc -l "$OUT"/kept/*.jsonl >>"$OUT/kept-ls.txt"
if command -v strace >/dev/null; then
  for a in -q ""; do
    strace -c -o "$OUT/strace$a.txt" "$NEW" $a --out "/tmp/s17/st$a" -- "$py" -c pass >/dev/null 2>&1
  done
else echo "no strace" >"$OUT/strace.txt"; fi
python3 bench/tools/compare.py --runs "${RUNS:-200}" --warmup 5 --keep-tmp --json "$OUT/summary-paired.json" \
  :: bare "$py" -c pass \
  :: quiet "$NEW" -q --out '{tmp}/t' -- "$py" -c pass \
  :: summary "$NEW" --out '{tmp}/t' -- "$py" -c pass 2>&1 | tee "$OUT/summary-paired.txt" | tail -5
python3 bench/tools/compare.py --runs 200 --warmup 5 --json "$OUT/report-kept.json" \
  :: version "$NEW" --version \
  :: report "$NEW" report "$OUT/kept" 2>&1 | tee "$OUT/report-kept.txt" | tail -3
