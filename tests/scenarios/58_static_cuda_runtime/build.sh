#!/usr/bin/env bash
# site/cupy_backends/cuda/api/runtime.so  the fake runtime (13.2) linked in,
#                                          hidden; exports app_device_count
# rt13/     the shared runtime libcudart.so.13
# driver/   libcuda 580.159.04, on LD_LIBRARY_PATH
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"
bash "$F/build-stack.sh" cudart "$B/rt13" --version 13.0
bash "$F/build-stack.sh" cuda "$B/driver" --driver 580.159.04 --cuda 13.0
mkdir -p "$B/site/cupy_backends/cuda/api"
"$CC" -shared -fPIC -fvisibility=hidden -I"$F/stack" -o "$B/site/cupy_backends/cuda/api/runtime.so" \
    "$S/app.c" "$F/stack/cudart.c" -DFAKE_STATIC_RUNTIME -DFAKE_CUDART=13020 -DFAKE_CUDART_MAJOR=13 \
    -pthread -ldl
"$CC" -o "$B/main" "$S/main.c" -ldl
