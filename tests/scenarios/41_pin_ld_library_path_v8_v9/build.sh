#!/usr/bin/env bash
# pin/   cuDNN 9.19.0, Debian layout (NAME.so.9.19.0 files, NAME.so.9 and NAME.so symlinks): the pin directory
# sys9/  cuDNN 9.14.0, Debian layout, on LD_LIBRARY_PATH
# sys8/  cuDNN 8.9.7, Debian layout, on LD_LIBRARY_PATH (first)
# main   the step program of ../_pin_common
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"; C="$S/../_pin_common"
bash "$F/build-stack.sh" cudnn9 "$B/pin" --version 9.19.0 --versioned-files
bash "$F/build-stack.sh" cudnn9 "$B/sys9" --version 9.14.0 --versioned-files
bash "$F/build-stack.sh" cudnn8 "$B/sys8" --version 8.9.7 --versioned-files
"$CC" -I"$F/stack" -I"$C" -o "$B/main" "$C/steps.c" -ldl
