#!/usr/bin/env bash
# pin/  cuDNN 8.9.7, pip wheel layout (NAME.so.8 files only): the pin directory
# sys/  cuDNN 8.9.2, Debian layout (NAME.so.8.9.2 + NAME.so.8 + NAME.so), on LD_LIBRARY_PATH
# main  the step program of ../_pin_common
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"; C="$S/../_pin_common"
bash "$F/build-stack.sh" cudnn8 "$B/pin" --version 8.9.7
bash "$F/build-stack.sh" cudnn8 "$B/sys" --version 8.9.2 --versioned-files
"$CC" -I"$F/stack" -I"$C" -o "$B/main" "$C/steps.c" -ldl
