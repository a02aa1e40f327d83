#!/usr/bin/env bash
# release-build.sh [OUT_DIR]
#
# The release CLI: one cudnn-trace binary for any x86_64 Linux with glibc
# 2.17 or later (RHEL/CentOS 7, Debian 9+, Ubuntu 16.04+), statically linked
# (glibc inside, no dynamic loader at its start, not position-independent),
# with the shim
# files and the probe helper embedded, checked with glibc-floor.sh (the
# binary, and the files it extracts). Copied to OUT_DIR (default
# target/release-static/dist). The wheel's binary is built the same way
# (pyproject.toml's rustc-args, scripts/release.sh).
#
# Why static: the launcher is a process of its own on every traced run, and
# linking it dynamically (three libraries mapped and relocated, libgcc_s's
# constructor, 9,000 relocations bound by symbol lookups) was the largest
# part of its start-up that is not the work it does (docs/benchmarks.md).
# What must be dynamic is built apart by core/build.rs and embedded: the
# shim (loaded by the traced program's glibc) and cdtrace-probe (the
# process that dlopens cuDNN to ask its version; a static program cannot).
#
# `-C target-feature=+crt-static` goes to the binary's own rustc (cargo
# rustc ... -- FLAGS), so the proc-macro crates the build needs stay
# dynamic. `-C relocation-model=static` makes it a plain static executable
# rather than a static-pie: a static-pie relocates itself at every start
# (10,500 relative relocations, each page they write a copy-on-write fault),
# 0.21-0.23 ms of every traced run here (docs/release.md says what that
# costs in hardening). It needs the C library's static archive (libc.a: Debian's
# libc6-dev, which the C compiler comes with).
#
# Exit status: 0 built and checked; 1 the binary is not static or the floor
# check failed.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
out=${1:-$repo/target/release-static/dist}

export CARGO_TARGET_DIR=$repo/target/release-static
# `--target` named, as maturin names it for the wheel: cargo's build metadata,
# and with it the hash in every Rust symbol's name, then match the wheel's, so
# that one hot-function list (cli/build.rs) fits both binaries.
host=$(rustc -vV | sed -n 's/^host: //p')
cargo rustc --release --locked -p cudnn-trace --bin cudnn-trace --target "$host" -- \
    -C target-feature=+crt-static -C relocation-model=static
cli=$CARGO_TARGET_DIR/$host/release/cudnn-trace
if readelf -lW "$cli" | grep -q 'INTERP' || readelf -dW "$cli" | grep -q '(NEEDED)'; then
  echo "release-build: $cli is not statically linked:" >&2
  readelf -dW "$cli" | grep '(NEEDED)' >&2 || true
  exit 1
fi
bash "$repo/scripts/glibc-floor.sh" --max 2.17 --cli "$cli" "$cli"
# How much of the hot-function list (cli/build.rs) the binary still has: a
# list made stale by changes costs speed only, and this says when to run
# scripts/hot-functions.sh again.
hot=$repo/cli/link/hot-functions.txt
if [ -s "$hot" ] && command -v nm >/dev/null; then
  have=$(nm --defined-only "$cli" | awk '{print $3}' | grep -cxFf "$hot" || true)
  total=$(wc -l <"$hot")
  echo "release-build: $have of $total hot functions found in the binary (cli/build.rs)"
  if [ "$((have * 2))" -lt "$total" ]; then
    echo "release-build: warning: the hot-function list is stale; run scripts/hot-functions.sh" >&2
  fi
fi
mkdir -p "$out"
cp "$cli" "$out/cudnn-trace"
echo "release-build: $out/cudnn-trace (static; glibc 2.17 and later for what it extracts)"
