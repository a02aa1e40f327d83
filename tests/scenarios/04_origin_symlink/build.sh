#!/usr/bin/env bash
#   real/prog                    exe, RPATH $ORIGIN/lib
#   real/lib/liba.so             "real"
#   links/bin/prog -> ../../real/prog
#   links/bin/lib/liba.so        "symlink"   (would be $ORIGIN/lib of the link)
#   store/lib/libf.so            RUNPATH $ORIGIN/deps, needs libg
#   store/lib/deps/libg.so       "store"
#   view/lib/libf.so -> ../../store/lib/libf.so
#   view/lib/deps/libg.so        "view"
#   pkg/v1/lib/libd.so           RUNPATH $ORIGIN/deps:$ORIGIN/../deps2 needs libh, libk
#   pkg/v1/lib/deps/libh.so      "pkg"
#   pkg/v1/deps2/libk.so         "pkg (physical parent)"
#   dirview -> pkg/v1/lib         (symlinked directory)
#   deps2/libk.so                "lexical parent"
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/real/lib" "$B/links/bin/lib" "$B/store/lib/deps" "$B/view/lib/deps" \
         "$B/pkg/v1/lib/deps" "$B/pkg/v1/deps2" "$B/deps2"
lib() { # lib OUT NAME WHERE [NEXT] [extra...]
    local out=$1 name=$2 where=$3 next=$4; shift 4
    "$CC" -shared -fPIC -o "$out" "$S/lib.c" -DNAME="$name" -DWHERE="\"$where\"" \
        ${next:+-DNEXT=$next} -Wl,-soname,"$(basename "$out")" "$@"
}
lib "$B/real/lib/liba.so"      a real ""
lib "$B/links/bin/lib/liba.so" a symlink ""
"$CC" -o "$B/real/prog" "$S/main.c" -L"$B/real/lib" -la -Wl,--disable-new-dtags,-rpath,'$ORIGIN/lib' -ldl
ln -s ../../real/prog "$B/links/bin/prog"

lib "$B/store/lib/deps/libg.so" g store ""
lib "$B/view/lib/deps/libg.so"  g view ""
lib "$B/store/lib/libf.so" f store g -L"$B/store/lib/deps" -lg -Wl,--enable-new-dtags,-rpath,'$ORIGIN/deps'
ln -s ../../store/lib/libf.so "$B/view/lib/libf.so"

lib "$B/pkg/v1/lib/deps/libh.so" h pkg ""
lib "$B/pkg/v1/deps2/libk.so"    k "pkg (physical parent)" ""
lib "$B/deps2/libk.so"           k "lexical parent" ""
"$CC" -shared -fPIC -o "$B/pkg/v1/lib/libd.so" "$S/lib.c" -DNAME=d -DWHERE='"pkg"' -DNEXT=h -DNEXT2=k \
    -Wl,-soname,libd.so -L"$B/pkg/v1/lib/deps" -lh -L"$B/pkg/v1/deps2" -lk \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN/deps:$ORIGIN/../deps2'
ln -s pkg/v1/lib "$B/dirview"
