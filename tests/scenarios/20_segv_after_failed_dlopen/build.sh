#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/lib"
for n in first last; do
    "$CC" -shared -fPIC -o "$B/lib/lib$n.so" "$S/lib.c" -Wl,-soname,lib$n.so
done
"$CC" -o "$B/main" "$S/main.c" -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' -ldl
