#!/usr/bin/env bash
# pin/                 cuDNN 9.19.0, pip wheel layout: the pin directory
# sys/                 cuDNN 9.14.0, Debian layout
# lib/libtorchlike.so  DT_NEEDED libcudnn.so.9, DT_RPATH $ORIGIN/../sys
# main                 no cuDNN dependency; dlopens lib/libtorchlike.so
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"; C="$S/../_pin_common"
bash "$F/build-stack.sh" cudnn9 "$B/pin" --version 9.19.0
bash "$F/build-stack.sh" cudnn9 "$B/sys" --version 9.14.0 --versioned-files
mkdir -p "$B/lib"
"$CC" -shared -fPIC -fvisibility=hidden -I"$F/stack" -o "$B/lib/libtorchlike.so" "$S/torchlike.c" \
    -L"$B/sys" -l:libcudnn.so.9 -Wl,-soname,libtorchlike.so \
    -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../sys'
"$CC" -I"$F/stack" -I"$C" -o "$B/main" "$S/main.c" -ldl
