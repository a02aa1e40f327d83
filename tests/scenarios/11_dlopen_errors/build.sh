#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/lib" "$B/wrong" "$B/tmp"
"$CC" -shared -fPIC -o "$B/tmp/libgone.so" "$S/lib.c" -Wl,-soname,libgone.so
"$CC" -shared -fPIC -o "$B/lib/libmissingdep.so" "$S/lib.c" -DNEEDS=good -Wl,-soname,libmissingdep.so -L"$B/tmp" -lgone
rm -rf "$B/tmp"
"$CC" -shared -fPIC -o "$B/lib/libundef.so" "$S/lib.c" -DNEEDS=nowhere_defined -Wl,-soname,libundef.so
"$CC" -shared -fPIC -o "$B/lib/libgood.so" "$S/lib.c" -Wl,-soname,libgood.so
for i in 1 2 3 4; do echo 'this is not an ELF file, just some text'; done > "$B/lib/libnotelf.so"
# a "32-bit" library: a valid one with EI_CLASS patched to ELFCLASS32
"$CC" -shared -fPIC -o "$B/wrong/libwrongclass.so" "$S/lib.c" -Wl,-soname,libwrongclass.so
printf '\001' | dd of="$B/wrong/libwrongclass.so" bs=1 seek=4 conv=notrunc status=none
cp "$B/wrong/libwrongclass.so" "$B/lib/libwrongclass.so"
"$CC" -shared -fPIC -o "$B/libwrongclass.so" "$S/lib.c" -Wl,-soname,libwrongclass.so
"$CC" -o "$B/main" "$S/main.c" -Wl,--enable-new-dtags,-rpath,'$ORIGIN:$ORIGIN/lib' -ldl
