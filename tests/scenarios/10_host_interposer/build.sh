#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/lib" "$B/plugins" "$B/env"
"$CC" -shared -fPIC -o "$B/lib/libinterpose.so" "$S/interpose.c" -Wl,-soname,libinterpose.so
for p in runpath env path; do
    d=plugins; [ $p = env ] && d=env
    "$CC" -shared -fPIC -o "$B/$d/libplug_$p.so" "$S/plug.c" -DNAME="\"plug_$p\"" -Wl,-soname,libplug_$p.so
done
"$CC" -o "$B/main" "$S/main.c" -L"$B/lib" -linterpose -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib:$ORIGIN/plugins' -ldl
