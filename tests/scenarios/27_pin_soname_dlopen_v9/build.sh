#!/usr/bin/env bash
# pin/  cuDNN 9.19.0, pip wheel layout (NAME.so.9 files only): the pin directory
# sys/  cuDNN 9.14.0, Debian layout (NAME.so.9.14.0 + NAME.so.9 + NAME.so), on LD_LIBRARY_PATH
# main  the step program of ../_pin_common (dlopen by soname, then calls)
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"; C="$S/../_pin_common"
bash "$F/build-stack.sh" cudnn9 "$B/pin" --version 9.19.0
bash "$F/build-stack.sh" cudnn9 "$B/sys" --version 9.14.0 --versioned-files
"$CC" -I"$F/stack" -I"$C" -o "$B/main" "$C/steps.c" -ldl
