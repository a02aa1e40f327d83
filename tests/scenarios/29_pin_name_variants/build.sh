#!/usr/bin/env bash
# pin/  cuDNN 9.19.0 (CUDA 13.0), pip wheel layout: only NAME.so.9 files: the pin directory
# sys/  the same cuDNN version built for CUDA 12.9, Debian layout: NAME.so.9.19.0 files
#       (+ NAME.so.9, NAME.so symlinks), on LD_LIBRARY_PATH
# main  the step program of ../_pin_common
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"; C="$S/../_pin_common"
bash "$F/build-stack.sh" cudnn9 "$B/pin" --version 9.19.0 --cuda 13.0
bash "$F/build-stack.sh" cudnn9 "$B/sys" --version 9.19.0 --cuda 12.9 --versioned-files
"$CC" -I"$F/stack" -I"$C" -o "$B/main" "$C/steps.c" -ldl
