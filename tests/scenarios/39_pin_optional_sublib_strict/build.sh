#!/usr/bin/env bash
# pin/  cuDNN 9.19.0, pip wheel layout, complete (no engines_tensor_ir, like the 9.20 wheel)
# sys/  cuDNN 9.14.0, Debian layout, on LD_LIBRARY_PATH, plus an extra
#       libcudnn_engines_tensor_ir.so.9.14.0 (+ .so.9, .so symlinks)
# main  the step program of ../_pin_common
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"; C="$S/../_pin_common"
bash "$F/build-stack.sh" cudnn9 "$B/pin" --version 9.19.0
bash "$F/build-stack.sh" cudnn9 "$B/sys" --version 9.14.0 --versioned-files
# an engine library only the system install has (not modelled by build-stack.sh):
# a fake sub-library like the others (DT_NEEDED graph, RUNPATH $ORIGIN)
T=libcudnn_engines_tensor_ir
"$CC" -std=gnu11 -shared -fPIC -fvisibility=hidden -I"$F/stack" \
    -DFAKE_MAJOR=9 -DFAKE_MINOR=14 -DFAKE_PATCH=0 -DFAKE_CUDART=13000 -DFAKE_CUDA_MAJOR=13 \
    -o "$B/sys/$T.so.9.14.0" "$F/stack/cudnn_sublib.c" -Wl,--no-as-needed -L"$B/sys" -l:libcudnn_graph.so.9 \
    -Wl,-soname,$T.so.9 -Wl,--enable-new-dtags,-rpath,'$ORIGIN' -ldl
ln -sfn $T.so.9.14.0 "$B/sys/$T.so.9"
ln -sfn $T.so.9 "$B/sys/$T.so"
"$CC" -I"$F/stack" -I"$C" -o "$B/main" "$C/steps.c" -ldl
