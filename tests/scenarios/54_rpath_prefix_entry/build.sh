#!/usr/bin/env bash
# main           DT_RPATH   $ORIGIN/A:$ORIGIN/A/sub; dlopens libpa.so (in A/sub only)
# lib/libr.so    DT_RUNPATH $ORIGIN/R:$ORIGIN/R/sub; dlopens librs.so (in lib/R/sub only)
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/A/sub" "$B/lib/R/sub"
"$CC" -shared -fPIC -o "$B/A/sub/libpa.so" "$S/lib.c" -DID='"A/sub/libpa.so"'
"$CC" -shared -fPIC -o "$B/lib/R/sub/librs.so" "$S/lib.c" -DID='"lib/R/sub/librs.so"'
"$CC" -shared -fPIC -o "$B/lib/libr.so" "$S/lib.c" -DID='"lib/libr.so"' -DOPENS='"librs.so"' \
    -ldl -Wl,--enable-new-dtags,-rpath,'$ORIGIN/R:$ORIGIN/R/sub'
"$CC" -o "$B/main" "$S/main.c" -ldl -Wl,--disable-new-dtags,-rpath,'$ORIGIN/A:$ORIGIN/A/sub'
