#!/usr/bin/env bash
# pip/  cuDNN 9.19.0 (pip wheel layout), the executable's DT_NEEDED through DT_RPATH
# sys/  cuDNN 9.14.0 (Debian layout: NAME.so.9.14.0 + links), opened by
#       absolute path RTLD_LOCAL: a second copy in the same namespace
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"
bash "$F/build-stack.sh" cudnn9 "$B/pip" --version 9.19.0 --cuda 13.0
bash "$F/build-stack.sh" cudnn9 "$B/sys" --version 9.14.0 --cuda 13.0 --versioned-files
"$CC" -I"$F/stack" -o "$B/main" "$S/main.c" -L"$B/pip" -l:libcudnn.so.9 -ldl \
    -Wl,--disable-new-dtags,-rpath,'$ORIGIN/pip'
