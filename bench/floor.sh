#!/usr/bin/env bash
# bench/floor.sh [--out DIR] [--no-build]: what LD_AUDIT itself costs in glibc,
# measured beside the shim, so that the shim's figures can be read as glibc's
# floor plus the shim's own part (issue 10).
#
# It builds do-nothing audit modules (bench/c/audit_floor.c: la_version alone,
# and every callback libcdtrace.so defines returning at once; each linked with
# libc, which makes glibc load a second libc.so.6 into the audit namespace as
# it does for the shim, and without), then measures with callgrind and
# /proc/PID/smaps_rollup, for the program bare, under each module and under the
# shim with the launcher's environment:
#   - instructions per dlopen+dlclose of a library outside the CUDA family and
#     of a CUDA-named one (dlloop, growth from 100 to 600 cycles);
#   - instructions per re-open of an already-loaded library among 1,000
#     (dlheavy, growth from 2,000 to 6,000 re-opens);
#   - memory of a small program (memprobe): RSS, PSS, private;
#   - the start of python3 -c pass: instructions and page faults;
#   - whether malloc's main arena grows a brk heap (heapcheck).
# A fifth module defines la_symbind64 alone (bench/c/heapcheck.c says why).
# Writes DIR/floor.json (default bench/results/latest) and prints a table;
# bench/tools/render.py shows it on docs/benchmarks.md. Needs cc, valgrind and
# the release CLI (built unless --no-build). About 6 minutes on 2 cores.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/target/bench/floor
out=$root/bench/results/latest
do_build=1
while [ $# -gt 0 ]; do
    case $1 in
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        --no-build) do_build=0; shift ;;
        *) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
command -v valgrind >/dev/null || { echo "bench/floor.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
read -ra cc_cmd <<<"${CC:-cc}"
cc_() { "${cc_cmd[@]}" -O2 -Wall -Wextra "$@"; }

mkdir -p "$build/lib" "$out"
for p in dlloop dlheavy memprobe heapcheck; do
    cc_ -o "$build/$p" "$root/bench/c/$p.c"
done
for name in libcublas_bench.so libplain_bench.so libcublas_bench_XXXX.so; do
    cc_ -shared -fPIC -Wl,-soname,"$name" -o "$build/lib/$name" "$root/bench/c/benchlib.c"
done
src=$root/bench/c/audit_floor.c
cc_ -shared -fPIC -DVERSION_ONLY -Wl,--no-as-needed -lc -o "$build/floor-version.so" "$src"
cc_ -shared -fPIC -Wl,--no-as-needed -lc -o "$build/floor-callbacks.so" "$src"
cc_ -shared -fPIC -DSYMBIND_ONLY -Wl,--no-as-needed -lc -o "$build/floor-symbind.so" "$src"
cc_ -shared -fPIC -DVERSION_ONLY -nostdlib -o "$build/floor-version-nolibc.so" "$src"
cc_ -shared -fPIC -nostdlib -o "$build/floor-callbacks-nolibc.so" "$src"
if [ "$do_build" = 1 ]; then
    "$BASH" "$root/scripts/release-build.sh" >&2
fi
exec python3 "$root/bench/tools/floor.py" --build "$build" --cli "$root/target/release-static/dist/cudnn-trace" \
    --out "$out"
