#!/usr/bin/env bash
# sys/  cuDNN 9.14.0, Debian layout, on LD_LIBRARY_PATH
# main  the step program of ../_pin_common
# (no pin directory: the pin names missing-pin-dir/, which is never created)
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"; C="$S/../_pin_common"
bash "$F/build-stack.sh" cudnn9 "$B/sys" --version 9.14.0 --versioned-files
"$CC" -I"$F/stack" -I"$C" -o "$B/main" "$C/steps.c" -ldl
