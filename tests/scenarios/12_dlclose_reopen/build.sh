#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/lib" "$B/alias" "$B/copy"
"$CC" -shared -fPIC -o "$B/lib/libcounted.so.1" "$S/lib.c" -Wl,-soname,libcounted.so.1
ln -s ../lib/libcounted.so.1 "$B/alias/libother-name.so"
cp "$B/lib/libcounted.so.1" "$B/copy/libcounted.so.1"
"$CC" -o "$B/main" "$S/main.c" -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' -ldl
