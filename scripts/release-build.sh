#!/usr/bin/env bash
# release-build.sh [OUT_DIR]
#
# The release CLI: one cudnn-trace binary for any x86_64 Linux with glibc
# 2.17 or later (RHEL/CentOS 7, Debian 9+, Ubuntu 16.04+), with both shim
# files embedded, checked with glibc-floor.sh (the binary and the shim files
# it extracts). Copied to OUT_DIR (default target/release-2.17/dist).
#
# `cargo build --release` links the CLI against the build machine's glibc,
# which is right for the machine it runs on; a binary to copy elsewhere
# (a container image, a cluster's nodes) needs glibc 2.17 symbol versions:
# cargo-zigbuild links it against zig's glibc 2.17 stubs. zig and
# cargo-zigbuild come from PyPI (ziglang, cargo-zigbuild) into a venv under
# target/ (CDT_ZIG_VENV to use another), once. The shim itself is linked by
# the host's linker either way (core/build.rs; shim/build.rs holds it to 2.17).
#
# Exit status: 0 built and checked; 1 the floor check failed; 77 after a line
# starting "SKIP:" when ziglang/cargo-zigbuild cannot be installed (PyPI
# unreachable), so that CI reports it and goes on.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
out=${1:-$repo/target/release-2.17/dist}
venv=${CDT_ZIG_VENV:-$repo/target/zig-venv}
target=x86_64-unknown-linux-gnu

if [ ! -x "$venv/bin/cargo-zigbuild" ] || ! "$venv/bin/python" -m ziglang version >/dev/null 2>&1; then
  echo "release-build: installing ziglang and cargo-zigbuild from PyPI into $venv" >&2
  python3 -m venv "$venv" >/dev/null 2>&1 || { echo "SKIP: release-build: python3 -m venv failed"; exit 77; }
  "$venv/bin/pip" install -q --disable-pip-version-check 'ziglang==0.17.1' 'cargo-zigbuild==0.24.1' >&2 \
    || { echo "SKIP: release-build: cannot install ziglang and cargo-zigbuild from PyPI"; exit 77; }
fi

export PATH="$venv/bin:$PATH"
export CARGO_TARGET_DIR=$repo/target/release-2.17
cargo zigbuild --release --locked -p cudnn-trace --target "$target.2.17"
cli=$CARGO_TARGET_DIR/$target/release/cudnn-trace
bash "$repo/scripts/glibc-floor.sh" --max 2.17 --cli "$cli" "$cli"
mkdir -p "$out"
cp "$cli" "$out/cudnn-trace"
echo "release-build: $out/cudnn-trace (glibc 2.17 and later, shim embedded)"
