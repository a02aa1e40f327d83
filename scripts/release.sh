#!/usr/bin/env bash
# release.sh [OUT_DIR]
#
# The release artefacts, from one build of the CLI (docs/release.md):
#   cudnn_trace-VERSION-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
#       `pip install` it: the cudnn-trace binary (shim embedded) as a script,
#       the cudnn_trace Python module, the bundled example's sources;
#   cudnn-trace-VERSION-x86_64-linux-gnu.tar.gz
#       the same binary, its man pages and shell completions, for images
#       without Python: `tar -xzf … -C /usr/local --strip-components=1`;
#   SHA256SUMS
# in OUT_DIR (default target/dist). Both need glibc 2.17 or later and nothing
# else from the system (docs/release.md).
#
# maturin (bindings = "bin", pyproject.toml) builds the wheel: the binary
# linked statically (its rustc-args, as scripts/release-build.sh builds it),
# and checks its manylinux tag itself; `auditwheel show` confirms it.
# auditwheel cannot see the files the binary embeds (the shim, the probe
# helper, which must be dynamic): scripts/glibc-floor.sh --cli checks the
# files the binary really extracts, and the binary itself. maturin,
# auditwheel and vermin come from PyPI into a venv under target/
# (CDT_PY_TOOLS to use another), once.
#
# Exit status: 0 built and checked; 1 a check failed; 77 after a line starting
# "SKIP:" when the tools cannot be installed (PyPI unreachable), so that CI
# reports it and goes on.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
out=${1:-$repo/target/dist}
tools=${CDT_PY_TOOLS:-$repo/target/py-tools}
target=x86_64-unknown-linux-gnu
# Pinned: the versions this script and the install test ran with.
pins=(maturin==1.16.0 auditwheel==6.8.2 vermin==1.9.2)

have_tools() {
  local p
  for p in "${pins[@]}"; do
    "$tools/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('${p%==*}') != '${p#*==}')" \
      2>/dev/null || return 1
  done
}
if ! have_tools; then
  echo "release: installing ${pins[*]} from PyPI into $tools" >&2
  python3 -m venv "$tools" >/dev/null 2>&1 || { echo "SKIP: release: python3 -m venv failed (python3-venv missing?)"; exit 77; }
  "$tools/bin/pip" install -q --disable-pip-version-check "${pins[@]}" >&2 \
    || { echo "SKIP: release: cannot install ${pins[*]} from PyPI"; exit 77; }
fi
export PATH="$tools/bin:$PATH"

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
[ -n "$version" ] || { echo "release: no version in Cargo.toml" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/cudnn_trace-"$version"-*.whl "$out"/cudnn-trace-"$version"-*.tar.gz "$out/SHA256SUMS"

echo "== the Python code runs on Python 3.8 (vermin)"
vermin --no-tips --violations --eval-annotations -t=3.8- python/cudnn_trace

echo "== the wheel (maturin, manylinux2014, the binary linked statically)"
# A target directory of its own: the static build does not share
# fingerprints with `cargo build`'s.
CARGO_TARGET_DIR=$repo/target/wheel maturin build --release --locked \
  --compatibility manylinux2014 --target "$target" --out "$out"
wheel=$(ls "$out"/cudnn_trace-"$version"-*manylinux*_x86_64.whl)

echo "== auditwheel show"
auditwheel show "$wheel" | tee "$out/auditwheel.txt"
# The binary is static: auditwheel finds it consistent with the oldest tag,
# manylinux_2_5, which includes what the wheel's manylinux_2_17 tag claims.
# (The embedded shim sets the 2.17 floor; glibc-floor.sh checks it below.)
# auditwheel wraps its lines.
tag=$(tr -s ' \n' ' ' <"$out/auditwheel.txt" | sed -n 's/.*platform tag: "manylinux_2_\([0-9]*\)_x86_64".*/\1/p')
[ -n "$tag" ] && [ "$tag" -le 17 ] \
  || { echo "release: auditwheel does not find the wheel manylinux_2_17_x86_64 or older" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "== the binary in the wheel, and the shim it extracts: glibc 2.17 at most"
python3 - "$wheel" "$tmp/cudnn-trace" <<'EOF'
import sys, zipfile, shutil
with zipfile.ZipFile(sys.argv[1]) as z:
    names = [n for n in z.namelist() if n.endswith(".data/scripts/cudnn-trace")]
    if len(names) != 1:
        sys.exit("release: the wheel holds {} cudnn-trace scripts".format(len(names)))
    with z.open(names[0]) as src, open(sys.argv[2], "wb") as dst:
        shutil.copyfileobj(src, dst)
EOF
chmod 755 "$tmp/cudnn-trace"
bash scripts/glibc-floor.sh --max 2.17 --cli "$tmp/cudnn-trace" "$tmp/cudnn-trace"

echo "== the tarball"
name=cudnn-trace-$version-x86_64-linux-gnu
stage=$tmp/$name
mkdir -p "$stage/bin" "$stage/share/man/man1" "$stage/share/bash-completion/completions" \
  "$stage/share/zsh/site-functions" "$stage/share/fish/vendor_completions.d" "$stage/share/doc/cudnn-trace"
cp "$tmp/cudnn-trace" "$stage/bin/cudnn-trace"
bin=$stage/bin/cudnn-trace
"$bin" man --dir "$stage/share/man/man1" >/dev/null
"$bin" completions bash >"$stage/share/bash-completion/completions/cudnn-trace"
"$bin" completions zsh >"$stage/share/zsh/site-functions/_cudnn-trace"
"$bin" completions fish >"$stage/share/fish/vendor_completions.d/cudnn-trace.fish"
cp README.md docs/release.md "$stage/share/doc/cudnn-trace/"
# Reproducible: the commit's time, no user names, sorted.
epoch=$(git log -1 --format=%ct 2>/dev/null || echo 0)
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
  -C "$tmp" -cf - "$name" | gzip -9n >"$out/$name.tar.gz"

(cd "$out" && sha256sum "${wheel##*/}" "$name.tar.gz" >SHA256SUMS)
echo "release: built and checked:"
(cd "$out" && ls -l "${wheel##*/}" "$name.tar.gz" SHA256SUMS | sed 's/^/  /')
