#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/nvidia/cudnn/lib" "$B/lib" "$B/cuda"
L="$B/nvidia/cudnn/lib"
"$CC" -shared -fPIC -o "$L/libcudnn_graph.so.9" "$S/other.c" -Wl,-soname,libcudnn_graph.so.9
"$CC" -shared -fPIC -o "$L/libcudnn.so.9" "$S/cudnn.c" -Wl,-soname,libcudnn.so.9 \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
"$CC" -shared -fPIC -o "$B/lib/libother.so" "$S/other.c" -Wl,-soname,libother.so
"$CC" -shared -fPIC -o "$B/lib/libplugin.so" "$S/other.c" -Wl,-soname,libplugin.so
"$CC" -shared -fPIC -o "$B/cuda/libcudart.so.12" "$S/other.c" -Wl,-soname,libcudart.so.12
"$CC" -o "$B/main" "$S/main.c" -L"$L" -l:libcudnn.so.9 -L"$B/lib" -lother \
    -Wl,--disable-new-dtags,-rpath,'$ORIGIN/nvidia/cudnn/lib:$ORIGIN/lib' -ldl
