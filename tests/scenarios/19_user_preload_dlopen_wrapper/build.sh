#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/pre" "$B/env" "$B/plugins"
"$CC" -shared -fPIC -o "$B/pre/libwrap.so" "$S/wrap.c" -Wl,-soname,libwrap.so
"$CC" -shared -fPIC -o "$B/env/libone.so" "$S/lib.c" -DWHERE='"env"' -Wl,-soname,libone.so
"$CC" -shared -fPIC -o "$B/plugins/libtwo.so" "$S/lib.c" -DWHERE='"plugins"' -Wl,-soname,libtwo.so
"$CC" -shared -fPIC -o "$B/plugins/libthree.so" "$S/lib.c" -DWHERE='"plugins"' -Wl,-soname,libthree.so
"$CC" -o "$B/main" "$S/main.c" -Wl,--enable-new-dtags,-rpath,'$ORIGIN/plugins' -ldl
