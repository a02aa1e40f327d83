#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/lib"
"$CC" -shared -fPIC -o "$B/lib/libearly.so" "$S/early.c" -Wl,-soname,libearly.so
"$CC" -o "$B/main" "$S/main.c" -L"$B/lib" -learly -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' -ldl
