#!/usr/bin/env bash
# driver/  libcuda 580.159.04 (CUDA 13.0): the executable's DT_NEEDED
# rt13/    CUDA runtime 13.0, rt11/ CUDA runtime 11.8 (pip layout), opened by path
# v8/      cuDNN 8.9.7 for CUDA 12.2 (pip wheel layout)
# other8/  cuDNN 8.9.6; mix/ holds only a link to its libcudnn_cnn_infer.so.8
#          and is on LD_LIBRARY_PATH (one mismatched sub-library)
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
F="$S/../../fixtures"
bash "$F/build-stack.sh" cuda "$B/driver" --driver 580.159.04 --cuda 13.0
bash "$F/build-stack.sh" cudart "$B/rt13" --version 13.0
bash "$F/build-stack.sh" cudart "$B/rt11" --version 11.8
bash "$F/build-stack.sh" cudnn8 "$B/v8" --version 8.9.7 --cuda 12.2
bash "$F/build-stack.sh" cudnn8 "$B/other8" --version 8.9.6 --cuda 12.2
mkdir -p "$B/mix"
ln -sfn ../other8/libcudnn_cnn_infer.so.8 "$B/mix/libcudnn_cnn_infer.so.8"
"$CC" -I"$F/stack" -o "$B/main" "$S/main.c" -L"$B/driver" -l:libcuda.so.1 -ldl \
    -Wl,--disable-new-dtags,-rpath,'$ORIGIN/driver'
