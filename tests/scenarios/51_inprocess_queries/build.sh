#!/usr/bin/env bash
# pip/     cuDNN 9.19.0 (pip wheel layout)
# rt13/    CUDA runtime 13.0, rt11/ CUDA runtime 11.8 (pip layout), opened by path
# driver/  libcuda 580.159.04, on LD_LIBRARY_PATH, opened by the program
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"
bash "$F/build-stack.sh" cudnn9 "$B/pip" --version 9.19.0 --cuda 13.0
bash "$F/build-stack.sh" cudart "$B/rt13" --version 13.0
bash "$F/build-stack.sh" cudart "$B/rt11" --version 11.8
bash "$F/build-stack.sh" cuda "$B/driver" --driver 580.159.04 --cuda 13.0
"$CC" -I"$F/stack" -I"$S/../_observe" -o "$B/main" "$S/main.c" -ldl
