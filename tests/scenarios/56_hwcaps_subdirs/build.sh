#!/usr/bin/env bash
# llp/ (LD_LIBRARY_PATH) holds each library only in a subdirectory glibc 2.36
# searches: x86_64/ (the platform), tls/, glibc-hwcaps/x86-64-v2/ (any x86-64
# CPU of the last 15 years); rp/ (the executable's DT_RPATH) has x86_64/.
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/llp/x86_64" "$B/llp/tls" "$B/llp/glibc-hwcaps/x86-64-v2" "$B/rp/x86_64"
lib() { "$CC" -shared -fPIC -o "$B/$1" "$S/lib.c" -DID="\"$1\""; }
lib llp/x86_64/libhw_plat.so
lib llp/tls/libhw_tls.so
lib llp/glibc-hwcaps/x86-64-v2/libhw_v2.so
lib rp/x86_64/libhw_rp.so
"$CC" -o "$B/main" "$S/main.c" -ldl -Wl,--disable-new-dtags,-rpath,'$ORIGIN/rp'
