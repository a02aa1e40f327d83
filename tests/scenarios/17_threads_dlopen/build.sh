#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/lib"
for t in 0 1; do for i in 0 1 2 3 4 5 6 7; do
    "$CC" -shared -fPIC -o "$B/lib/libt${t}_$i.so" "$S/lib.c" -DVALUE=$((t * 100 + i)) -Wl,-soname,libt${t}_$i.so
done; done
"$CC" -o "$B/main" "$S/main.c" -pthread -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' -ldl
