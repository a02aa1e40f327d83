#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/lib/sub"
"$CC" -shared -fPIC -o "$B/lib/sub/libgrandchild.so" "$S/grandchild.c" -Wl,-soname,libgrandchild.so
"$CC" -shared -fPIC -o "$B/lib/sub/libctorchild.so" "$S/child.c" -Wl,-soname,libctorchild.so \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
"$CC" -shared -fPIC -o "$B/lib/libearly.so" "$S/early.c" -Wl,-soname,libearly.so \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN/sub'
"$CC" -shared -fPIC -o "$B/lib/libexector.so" "$S/grandchild.c" -Wl,-soname,libexector.so
"$CC" -o "$B/main" "$S/main.c" -L"$B/lib" -learly -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' -ldl
