#!/usr/bin/env bash
# pin/   cuDNN 9.19.0, pip wheel layout: the pin directory
# sys/   cuDNN 9.14.0, Debian layout, on LD_LIBRARY_PATH
# main   forks a child that dlopens cuDNN, then forks one that execs ./steps
# steps  the step program of ../_pin_common
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"; C="$S/../_pin_common"
bash "$F/build-stack.sh" cudnn9 "$B/pin" --version 9.19.0
bash "$F/build-stack.sh" cudnn9 "$B/sys" --version 9.14.0 --versioned-files
"$CC" -I"$F/stack" -I"$C" -o "$B/steps" "$C/steps.c" -ldl
"$CC" -I"$F/stack" -I"$C" -o "$B/main" "$S/main.c" -ldl
