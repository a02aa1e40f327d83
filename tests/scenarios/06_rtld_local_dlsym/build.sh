#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/lib"
"$CC" -shared -fPIC -o "$B/lib/libcudnn.so.9" "$S/cudnn.c" -Wl,-soname,libcudnn.so.9
"$CC" -shared -fPIC -o "$B/lib/libglob.so" "$S/glob.c" -Wl,-soname,libglob.so
"$CC" -o "$B/main" "$S/main.c" -ldl
