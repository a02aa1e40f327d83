#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/plugins/sub"
"$CC" -shared -fPIC -o "$B/plugins/sub/libdeepdep.so" "$S/dep.c" -DNAME='"deepdep"' -Wl,-soname,libdeepdep.so
"$CC" -shared -fPIC -o "$B/plugins/sub/libshallowdep.so" "$S/dep.c" -DNAME='"shallowdep"' -Wl,-soname,libshallowdep.so
for p in deep shallow; do
    "$CC" -shared -fPIC -o "$B/plugins/lib$p.so" "$S/plugin.c" -DDEP="\"lib${p}dep.so\"" \
        -Wl,-soname,lib$p.so -Wl,--enable-new-dtags,-rpath,'$ORIGIN/sub'
done
"$CC" -o "$B/main" "$S/main.c" -rdynamic -ldl
