#!/usr/bin/env bash
# pip/  cuDNN 9.19.0 (pip wheel layout)
# main  linked against libcudnn.so.9 with -z now: its PLT is bound at start-up,
#       where glibc >= 2.35 reports each binding to la_symbind64 (BZ#23734)
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"
bash "$F/build-stack.sh" cudnn9 "$B/pip" --version 9.19.0 --cuda 13.0
"$CC" -I"$F/stack" -o "$B/main" "$S/main.c" -L"$B/pip" -l:libcudnn.so.9 \
    -Wl,--disable-new-dtags,-rpath,'$ORIGIN/pip' -Wl,-z,now -ldl
