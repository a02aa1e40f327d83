#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/lib" "$B/env"
"$CC" -shared -fPIC -o "$B/lib/libnd.so" "$S/opener.c" -DNAME=nd -Wl,-soname,libnd.so -Wl,-z,nodefaultlib
"$CC" -shared -fPIC -o "$B/lib/libplain.so" "$S/opener.c" -DNAME=plain -Wl,-soname,libplain.so
"$CC" -shared -fPIC -o "$B/env/libenvonly.so" "$S/envonly.c" -Wl,-soname,libenvonly.so
"$CC" -o "$B/main" "$S/main.c" -L"$B/lib" -lnd -lplain -Wl,--enable-new-dtags,-rpath,'$ORIGIN/lib' -ldl
# the file behind libz.so.1 in a default directory (libz.so.1.2.13 on Debian 12)
z=
for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /lib64 /usr/lib64; do
    if [ -e "$d/libz.so.1" ]; then z=$(readlink -f "$d/libz.so.1"); break; fi
done
[ -n "$z" ] && [ "$(basename "$z")" != libz.so.1 ] || { echo "no versioned libz.so.1 file found" >&2; exit 1; }
basename "$z" > "$B/defaultlib.txt"
echo "$d/$(basename "$z")" > "$B/defaultlib.path"  # the path ld.so maps (l_name), not the realpath
