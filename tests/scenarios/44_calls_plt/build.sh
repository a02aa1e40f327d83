#!/usr/bin/env bash
# pip/     cuDNN 9.19.0 for CUDA 13.0, pip wheel layout
# driver/  libcuda 580.159.04 (CUDA 13.0), on LD_LIBRARY_PATH
# main     linked against libcudnn.so.9 through DT_RPATH, like libtorch_cuda.so,
#          with lazy binding (PLT entries bound at their first call)
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"
bash "$F/build-stack.sh" cudnn9 "$B/pip" --version 9.19.0 --cuda 13.0
bash "$F/build-stack.sh" cuda "$B/driver" --driver 580.159.04 --cuda 13.0
"$CC" -I"$F/stack" -o "$B/main" "$S/main.c" -L"$B/pip" -l:libcudnn.so.9 \
    -Wl,--disable-new-dtags,-rpath,'$ORIGIN/pip' -Wl,-z,lazy -ldl
