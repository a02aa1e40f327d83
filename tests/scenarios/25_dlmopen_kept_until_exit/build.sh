#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/lib"
"$CC" -shared -fPIC -o "$B/lib/libcudnn_ns.so.9" "$S/libns.c" -Wl,-soname,libcudnn_ns.so.9
"$CC" -o "$B/main" "$S/main.c" -ldl
