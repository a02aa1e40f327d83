#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/e" "$B/p/x" "$B/p/y" "$B/p/z"
lib() { # lib OUT NAME WHERE [NEXT] [extra ld args...]
    local out=$1 name=$2 where=$3 next=$4; shift 4
    "$CC" -shared -fPIC -o "$out" "$S/lib.c" -DNAME="$name" -DWHERE="\"$where\"" \
        ${next:+-DNEXT=$next} -Wl,-soname,"$(basename "$out")" "$@"
}
# start-up chain, everything in e/ found via the exe's RPATH
lib "$B/e/libc_.so" c_ e ""
lib "$B/e/libb.so"  b  e c_ -L"$B/e" -lc_
lib "$B/e/liba.so"  a  e b  -L"$B/e" -lb
# dlopen chain
lib "$B/p/z/libs.so" s z ""
lib "$B/p/y/libr.so" r y s -L"$B/p/z" -ls
lib "$B/p/x/libq.so" q x r -L"$B/p/y" -lr
lib "$B/p/libp.so"   p p q -L"$B/p/x" -lq -Wl,--disable-new-dtags,-rpath,'$ORIGIN/x:$ORIGIN/y:$ORIGIN/z'
# RUNPATH breaks the inheritance
lib "$B/p/z/libu2.so" u2 z ""
lib "$B/e/libu2.so"   u2 e ""
lib "$B/p/x/libt2.so" t2 x u2 -L"$B/p/z" -lu2 -Wl,--enable-new-dtags,-rpath,'$ORIGIN/nowhere'
lib "$B/p/libt.so"    t  p t2 -L"$B/p/x" -lt2 -Wl,--disable-new-dtags,-rpath,'$ORIGIN/x:$ORIGIN/y:$ORIGIN/z'
"$CC" -o "$B/main" "$S/main.c" -L"$B/e" -la -Wl,--disable-new-dtags,-rpath,'$ORIGIN/e' -Wl,-rpath-link,"$B/e" -ldl
