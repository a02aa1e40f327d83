#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/pre" "$B/envdir" "$B/rel"
"$CC" -shared -fPIC -o "$B/pre/libuserpre.so" "$S/pre.c" -Wl,-soname,libuserpre.so
"$CC" -shared -fPIC -o "$B/envdir/libinenv.so" "$S/lib.c" -DWHERE='"envdir"' -Wl,-soname,libinenv.so
"$CC" -shared -fPIC -o "$B/libincwd.so" "$S/lib.c" -DWHERE='"cwd"' -Wl,-soname,libincwd.so
"$CC" -shared -fPIC -o "$B/rel/libinrel.so" "$S/lib.c" -DWHERE='"rel"' -Wl,-soname,libinrel.so
"$CC" -o "$B/main" "$S/main.c" -ldl
