#!/usr/bin/env bash
# rt13/    CUDA runtime 13.0 (pip layout): gets driver functions through
#          cuGetProcAddress_v2, starting with cuGetProcAddress itself
# rt11/    CUDA runtime 11.8: the same through the 4-argument cuGetProcAddress
# driver/  libcuda 580.159.04 (CUDA 13.0), one device of compute capability 8.6
# main     linked against libcudart.so.13 (DT_RPATH, like libtorch_cuda.so);
#          opens the 11.8 runtime by path and calls it through dlsym
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"
bash "$F/build-stack.sh" cudart "$B/rt13" --version 13.0
bash "$F/build-stack.sh" cudart "$B/rt11" --version 11.8
bash "$F/build-stack.sh" cuda "$B/driver" --driver 580.159.04 --cuda 13.0 --cc 8.6
"$CC" -I"$F/stack" -o "$B/main" "$S/main.c" -L"$B/rt13" -l:libcudart.so.13 -ldl \
    -Wl,--disable-new-dtags,-rpath,'$ORIGIN/rt13:$ORIGIN/driver'
