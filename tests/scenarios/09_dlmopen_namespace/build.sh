#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/ns/dep" "$B/env"
"$CC" -shared -fPIC -o "$B/ns/dep/libnsdep.so" "$S/dep.c" -DVALUE=100 -Wl,-soname,libnsdep.so
"$CC" -shared -fPIC -o "$B/ns/dep/libnsextra.so" "$S/extra.c" -Wl,-soname,libnsextra.so
"$CC" -shared -fPIC -o "$B/env/libnsenv.so" "$S/extra.c" -Wl,-soname,libnsenv.so
"$CC" -shared -fPIC -o "$B/ns/libns.so" "$S/ns.c" -Wl,-soname,libns.so -L"$B/ns/dep" -lnsdep \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN/dep'
"$CC" -o "$B/main" "$S/main.c" -ldl
