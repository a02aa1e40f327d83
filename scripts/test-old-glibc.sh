#!/usr/bin/env bash
# test-old-glibc.sh [CARGO TEST ARGS...]
#
# Runs the test suite (`cargo test --workspace --locked`, the README's test
# command) inside a Debian 11 root, glibc 2.31, made by old-glibc-root.sh:
# the shim, the CLI, the fixtures and the tests are all built there, by
# bullseye's gcc against its glibc, with this machine's Rust toolchain
# (bind-mounted: rustup's rustc and cargo run on glibc 2.17 and later) and
# its cargo registry (fetched here first; the root stays offline).
#
# Artefacts go to target/bullseye (they are glibc 2.31 builds). Extra
# arguments go to cargo test (a test name, `--test scenarios`, `-- --nocapture`).
#
# Exit status: cargo's; 0 after a line starting "SKIP:" when the root cannot
# be had (see old-glibc-root.sh), so that CI reports the skip and goes on.
# Needs root. docs/glibc.md lists what is expected to differ on glibc 2.31.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

sysroot=$(rustc --print sysroot)
[ -x "$sysroot/bin/cargo" ] || { echo "test-old-glibc: no cargo in $sysroot/bin" >&2; exit 2; }
cargo_home=${CARGO_HOME:-$HOME/.cargo}
# Sources for the offline build inside.
cargo fetch --locked >/dev/null
cargo fetch --locked --manifest-path shim/preload/Cargo.toml >/dev/null

set +e
CDT_OLD_ROOT_BINDS="$sysroot $cargo_home" \
CDT_OLD_ROOT_PATH="$sysroot/bin" \
CDT_OLD_ROOT_ENV="CARGO_HOME=$cargo_home CARGO_TARGET_DIR=$repo/target/bullseye CARGO_NET_OFFLINE=true CARGO_TERM_COLOR=never ${CDT_OLD_GLIBC_ENV:-}" \
  "$repo/scripts/old-glibc-root.sh" -- bash -c 'ldd --version | head -1; exec cargo test --workspace --locked "$@"' bash "$@"
rc=$?
set -e
if [ $rc = 77 ]; then
  echo "SKIP: the test suite was not run on glibc 2.31 (no Debian 11 root, see above)"
  exit 0
fi
exit $rc
