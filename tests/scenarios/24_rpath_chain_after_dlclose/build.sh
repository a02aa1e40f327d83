#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/a" "$B/b" "$B/rp"
"$CC" -shared -fPIC -o "$B/b/libb.so" "$S/libb.c" -Wl,-soname,libb.so
"$CC" -shared -fPIC -o "$B/a/liba.so" "$S/liba.c" -Wl,-soname,liba.so -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../b'
"$CC" -shared -fPIC -o "$B/rp/libcudnn_fake.so" "$S/libc_fake.c" -Wl,-soname,libcudnn_fake.so
"$CC" -o "$B/main" "$S/main.c" -Wl,--disable-new-dtags,-rpath,'$ORIGIN/rp' -ldl
