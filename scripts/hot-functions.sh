#!/usr/bin/env bash
# hot-functions.sh [BINARY]
#
# Writes cli/link/hot-functions.txt: the symbols of the functions the
# launcher runs in an ordinary run, which cli/build.rs hands to the linker
# (lld's --symbol-ordering-file) so that they lie together at the start of
# the binary's text. Each traced run pays for the launcher's code page by
# page: the kernel maps a file's pages 64 KiB at a time around each fault, and
# the ~700 functions of a run were spread over 59 such windows of the 5.4 MB
# text, 21 once ordered (docs/benchmarks.md, session 16: 0.01 to 0.09 ms less
# a traced /bin/true, 0.05 to 0.09 with the summary).
#
# The list comes from callgrind (--demangle=no, so the names are the
# binary's own symbols) on, in this order: `-q /bin/true` (stderr a file),
# the same with the end-of-run summary, the same with stderr a pipe (the
# relay), and `report` of a run directory. Functions the first run needs come
# first. A stale list is harmless: names the binary no longer has are
# skipped (--no-warn-symbol-ordering), and scripts/release-build.sh says how
# many of them the binary still has. Run this again after large changes to
# the launcher, the summary or a dependency's version.
#
# BINARY: a release build of cudnn-trace (default: scripts/release-build.sh
# is run first). Needs valgrind.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$repo/cli/link/hot-functions.txt
command -v valgrind >/dev/null || { echo "hot-functions: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
if [ $# -ge 1 ]; then
  cli=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
else
  bash "$repo/scripts/release-build.sh" >&2
  cli=$repo/target/release-static/dist/cudnn-trace
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

# callgrind NAME ARGS...: the run's function names, in the order callgrind
# lists them, into NAME.names.
callgrind() {
  local name=$1
  shift
  valgrind --tool=callgrind --demangle=no --log-file="$tmp/$name.log" \
    --callgrind-out-file="$tmp/$name.out" "$cli" "$@"
  sed -nE 's/^c?fn=\([0-9]+\) (.*)$/\1/p' "$tmp/$name.out" | sed -E "s/'[0-9]+$//" >"$tmp/$name.names"
}
callgrind quiet -q --out "$tmp/q" -- /bin/true 2>"$tmp/q.err"
callgrind summary --out "$tmp/s" -- /bin/true 2>"$tmp/s.err"
callgrind relay --out "$tmp/r" -- /bin/true 2>&1 | cat >/dev/null
callgrind report report "$tmp/s" >/dev/null 2>&1

mkdir -p "$(dirname "$out")"
# Unknown addresses (0x…) are no symbols; each name once, first place kept.
cat quiet.names summary.names relay.names report.names | grep -v '^0x' | awk '!seen[$0]++' >"$out"
echo "hot-functions: $(wc -l <"$out") names in ${out#"$repo"/}" >&2
