#!/usr/bin/env bash
# Three directories hold copies of the same libraries:
#   rpath/   named by the executable's DT_RPATH
#   env/     on LD_LIBRARY_PATH
#   runpath/ named by libmid's DT_RUNPATH
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/rpath" "$B/env" "$B/runpath" "$B/mid"
lib() { # lib DIR NAME [extra...]
    local dir=$1 name=$2; shift 2
    "$CC" -shared -fPIC -o "$B/$dir/lib$name.so" "$S/lib.c" -DNAME="$name" -DWHERE="\"$dir\"" \
        -Wl,-soname,"lib$name.so" "$@"
}
for d in rpath env; do lib $d p; done      # p: rpath wins over env
for d in rpath env runpath; do lib $d q; done  # q (needed by mid): env wins
for d in rpath runpath; do lib $d r; done  # r (needed by mid): runpath (exe RPATH skipped)
lib mid mid -DNEXT1=q -DNEXT2=r -L"$B/runpath" -lq -lr -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../runpath'
"$CC" -o "$B/main" "$S/main.c" -L"$B/rpath" -lp -L"$B/mid" -lmid -Wl,-rpath-link,"$B/runpath" \
    -Wl,--disable-new-dtags,-rpath,'$ORIGIN/rpath:$ORIGIN/mid'
