#!/usr/bin/env bash
# cuDNN 9 + pip wheel situation:
#   site/x/lib/  the wheel: dispatcher libx.so.9 (RUNPATH $ORIGIN) and the
#                sub-libraries it ships, named libx_*.so.9 (one as .so.9.1.0)
#   decoy/       another install (on LD_LIBRARY_PATH) of version 9.0.0 with
#                the usual real-file + symlink naming
# The exe finds libx.so.9 through its DT_RPATH (like libtorch_cuda.so).
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B/site/x/lib" "$B/decoy"
W="$B/site/x/lib"; D="$B/decoy"

sub() { # sub NAME VERSION WHERE OUTFILE SONAME
    "$CC" -shared -fPIC -o "$4" "$S/sub.c" -DSUB="$1" -DVERSION="\"$2\"" -DWHERE="\"$3\"" -Wl,-soname,"$5"
}
# the wheel (9.1.0)
"$CC" -shared -fPIC -o "$W/libx.so.9" "$S/libx.c" -DVERSION='"9.1.0"' -DWHERE='"site"' \
    -Wl,-soname,libx.so.9 -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
sub graph 9.1.0 site "$W/libx_graph.so.9" libx_graph.so.9
sub ops   9.1.0 site "$W/libx_ops.so.9"   libx_ops.so.9
sub adv   9.1.0 site "$W/libx_adv.so.9.1.0" libx_adv.so.9
# (no engines, no cnn in the wheel)

# the decoy (9.0.0)
"$CC" -shared -fPIC -o "$D/libx.so.9.0.0" "$S/libx.c" -DVERSION='"9.0.0"' -DWHERE='"decoy"' \
    -Wl,-soname,libx.so.9 -Wl,--enable-new-dtags,-rpath,'$ORIGIN'
ln -sf libx.so.9.0.0 "$D/libx.so.9"
for s in graph engines adv; do
    sub $s 9.0.0 decoy "$D/libx_$s.so.9.0.0" libx_$s.so.9
    ln -sf libx_$s.so.9.0.0 "$D/libx_$s.so.9"
done
# ops: the decoy has only the real file and the dev symlink, no .so.9
sub ops 9.0.0 decoy "$D/libx_ops.so.9.0.0" libx_ops.so.9
ln -sf libx_ops.so.9.0.0 "$D/libx_ops.so"

"$CC" -o "$B/main" "$S/main.c" -L"$W" -l:libx.so.9 -Wl,--disable-new-dtags,-rpath,'$ORIGIN/site/x/lib' -ldl
