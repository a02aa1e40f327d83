#!/usr/bin/env bash
# wheel.libs/libcudart-8a3b2c1d.so.12  auditwheel's copy: file and SONAME renamed
# vendored/_cudart.so     renamed file, SONAME libcudart.so.12 kept
# vendored/libvcudnn.so   renamed, SONAME renamed too: defines cudnnGetVersion
# vendored/libvdrv.so.1   renamed driver: defines cuInit
# cuda/lib64/stubs/libcuda.so  the toolkit's driver stub (SONAME libcuda.so.1)
# tf/libcudart_stub.so    a runtime stub
# misc/libplain.so        no CUDA library at all
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/wheel.libs" "$B/vendored" "$B/cuda/lib64/stubs" "$B/tf" "$B/misc"
lib() { # OUT SONAME DEFINES
    "$CC" -shared -fPIC -fvisibility=hidden -o "$B/$1" "$S/lib.c" -Wl,-soname,"$2" \
        -DDEFINES_"$3" -DWHICH="\"$1\""
}
lib wheel.libs/libcudart-8a3b2c1d.so.12 libcudart-8a3b2c1d.so.12 cudart
lib vendored/_cudart.so libcudart.so.12 cudart
lib vendored/libvcudnn.so libvcudnn.so cudnn
lib vendored/libvdrv.so.1 libvdrv.so.1 cuda
lib cuda/lib64/stubs/libcuda.so libcuda.so.1 cuda
lib tf/libcudart_stub.so libcudart_stub.so cudart
lib misc/libplain.so libplain.so none
"$CC" -o "$B/main" "$S/main.c" -ldl
