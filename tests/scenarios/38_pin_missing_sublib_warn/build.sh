#!/usr/bin/env bash
# pin/  cuDNN 9.19.0, pip wheel layout, WITHOUT libcudnn_cnn.so.9: the pin directory
# sys/  cuDNN 9.14.0, Debian layout (complete), on LD_LIBRARY_PATH
# main  the step program of ../_pin_common
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"; C="$S/../_pin_common"
bash "$F/build-stack.sh" cudnn9 "$B/pin" --version 9.19.0
rm "$B/pin/libcudnn_cnn.so.9"
bash "$F/build-stack.sh" cudnn9 "$B/sys" --version 9.14.0 --versioned-files
"$CC" -I"$F/stack" -I"$C" -o "$B/main" "$C/steps.c" -ldl
