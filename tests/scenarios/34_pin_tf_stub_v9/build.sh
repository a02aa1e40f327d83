#!/usr/bin/env bash
# pin/             cuDNN 9.19.0, pip wheel layout: the pin directory
# sys/             cuDNN 9.14.0, Debian layout
# lib/libtfstub.so the TF-style loader, DT_RUNPATH $ORIGIN/../sys
# main             DT_NEEDED libtfstub.so (DT_RUNPATH $ORIGIN/lib)
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"; C="$S/../_pin_common"
bash "$F/build-stack.sh" cudnn9 "$B/pin" --version 9.19.0
bash "$F/build-stack.sh" cudnn9 "$B/sys" --version 9.14.0 --versioned-files
mkdir -p "$B/lib"
"$CC" -shared -fPIC -fvisibility=hidden -DCUDNN_MAJOR=9 -o "$B/lib/libtfstub.so" "$C/tf_stub.c" \
    -Wl,-soname,libtfstub.so -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../sys' -ldl
"$CC" -I"$F/stack" -I"$C" -o "$B/main" "$C/tf_main.c" -L"$B/lib" -ltfstub \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' -ldl
