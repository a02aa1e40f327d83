#!/usr/bin/env bash
# pip/     cuDNN 9.19.0 (pip wheel layout) without libcudnn_engines_precompiled,
#          the engine library that opens the driver when it is loaded: here only
#          a *VersionCheck call can load the driver
# driver/  libcuda 580.159.04, on LD_LIBRARY_PATH
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"
bash "$F/build-stack.sh" cudnn9 "$B/pip" --version 9.19.0 --cuda 13.0
rm -f "$B/pip/libcudnn_engines_precompiled.so.9"
bash "$F/build-stack.sh" cuda "$B/driver" --driver 580.159.04 --cuda 13.0
"$CC" -I"$F/stack" -I"$S/../_observe" -o "$B/main" "$S/main.c" -ldl
