#!/usr/bin/env bash
# pin/             cuDNN 8.9.7, pip wheel layout: the pin directory
# sys/             cuDNN 8.9.2, Debian layout
# lib/libtfstub.so the TF-style loader, DT_RUNPATH $ORIGIN/../sys
# main             DT_NEEDED libtfstub.so (DT_RUNPATH $ORIGIN/lib)
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"; C="$S/../_pin_common"
bash "$F/build-stack.sh" cudnn8 "$B/pin" --version 8.9.7
bash "$F/build-stack.sh" cudnn8 "$B/sys" --version 8.9.2 --versioned-files
mkdir -p "$B/lib"
"$CC" -shared -fPIC -fvisibility=hidden -DCUDNN_MAJOR=8 -o "$B/lib/libtfstub.so" "$C/tf_stub.c" \
    -Wl,-soname,libtfstub.so -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../sys' -ldl
"$CC" -I"$F/stack" -I"$C" -o "$B/main" "$C/tf_main.c" -L"$B/lib" -ltfstub \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' -ldl
