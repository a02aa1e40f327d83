#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/a/ta" "$B/b/tb"
"$CC" -shared -fPIC -o "$B/a/ta/libtarget_a.so" "$S/target.c" -DWHICH='"ta"'
"$CC" -shared -fPIC -o "$B/b/tb/libtarget_b.so" "$S/target.c" -DWHICH='"tb"'
"$CC" -shared -fPIC -o "$B/a/libcaller_a.so" "$S/caller.c" -Wl,--enable-new-dtags,-rpath,'$ORIGIN/ta'
# Same size, so mapped where the first build was once that is unloaded.
"$CC" -shared -fPIC -fno-plt -nostartfiles -o "$B/b/libcaller_b.so" "$S/caller.c" -DPAD='"256"' \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN/tb'
"$CC" -shared -fPIC -nostartfiles -o "$B/libloader.so" "$S/loader.c"
"$CC" -o "$B/main" "$S/main.c" -Wl,--enable-new-dtags,-rpath,'$ORIGIN' -ldl
