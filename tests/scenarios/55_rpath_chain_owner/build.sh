#!/usr/bin/env bash
# main            DT_RPATH $ORIGIN/X/sub, DT_NEEDED libr.so
# X/libr.so       found through LD_LIBRARY_PATH (X); DT_RPATH $ORIGIN (= X),
#                 DT_NEEDED libq.so
# X/sub/libq.so   not in X: found through main's RPATH, after libr's failed
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/X/sub"
"$CC" -shared -fPIC -o "$B/X/sub/libq.so" "$S/lib.c" -Wl,-soname,libq.so
"$CC" -shared -fPIC -o "$B/X/libr.so" "$S/lib.c" -DNEEDS_Q -Wl,-soname,libr.so \
    -L"$B/X/sub" -lq -Wl,--disable-new-dtags,-rpath,'$ORIGIN'
"$CC" -o "$B/main" "$S/main.c" -L"$B/X" -lr -Wl,-rpath-link,"$B/X/sub" \
    -Wl,--disable-new-dtags,-rpath,'$ORIGIN/X/sub'
