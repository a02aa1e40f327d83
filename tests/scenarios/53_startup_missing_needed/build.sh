#!/usr/bin/env bash
# lib/libtorchlike.so  DT_NEEDED libcudart.so.12, DT_RUNPATH $ORIGIN/../rt
# rt/                  where libcudart.so.12 was, removed after linking
# elsewhere/           on LD_LIBRARY_PATH, without it
# main                 DT_NEEDED libtorchlike.so through DT_RUNPATH $ORIGIN/lib
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"
bash "$F/build-stack.sh" cudart "$B/rt" --version 12.4
mkdir -p "$B/lib" "$B/elsewhere"
"$CC" -shared -fPIC -o "$B/lib/libtorchlike.so" "$S/torchlike.c" -I"$F/stack" \
    -L"$B/rt" -l:libcudart.so.12 -Wl,--no-as-needed -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../rt'
"$CC" -o "$B/main" "$S/main.c" -L"$B/lib" -ltorchlike -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' -ldl
rm -f "$B/rt/libcudart.so.12"
