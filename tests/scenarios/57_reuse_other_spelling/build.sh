#!/usr/bin/env bash
# D1/libd.so         the library (no SONAME, so no name match)
# alias/libd_alias.so  a symlink to it, on LD_LIBRARY_PATH
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/D1" "$B/alias"
"$CC" -shared -fPIC -o "$B/D1/libd.so" "$S/lib.c"
ln -sfn ../D1/libd.so "$B/alias/libd_alias.so"
"$CC" -o "$B/main" "$S/main.c" -ldl
