#!/usr/bin/env bash
# old-glibc-root.sh [--root DIR] [--mirror URL] -- COMMAND...
#
# Makes (once, then cached) a Debian 11 "bullseye" root, glibc 2.31, with
# debootstrap, and runs COMMAND inside it: chroot in a private mount
# namespace, with /proc, /dev, a fresh /tmp and the repository bind-mounted
# at the same paths as outside (so absolute paths baked into test binaries
# and fixtures stay valid). Bullseye is the oldest Debian release the
# project's package mirror still serves; glibc 2.31 has the rtld-audit bugs
# fixed in 2.35 (docs/glibc.md).
#
#   --root DIR    where the root lives (default: $CDT_OLD_ROOT, else
#                 ${XDG_CACHE_HOME:-~/.cache}/cudnn-trace-dev/bullseye)
#   --mirror URL  Debian mirror (default: $CDT_DEBIAN_MIRROR, else the first
#                 Debian URI of the host's apt sources, else deb.debian.org)
#   CDT_OLD_ROOT_BINDS="DIR..."  more directories to bind at the same path
#   CDT_OLD_ROOT_PATH=DIR:...    put in front of PATH inside
#   CDT_OLD_ROOT_ENV="K=V..."    more variables inside (the environment is
#                                cleared otherwise)
#
# Exit status: COMMAND's; 77 when the root cannot be had (not root, no
# debootstrap and apt-get cannot install it, the mirror unreachable, or
# debootstrap failed), after one line on stderr starting "SKIP:".
# Needs root (debootstrap, chroot, mount). First run: about a minute and
# 470 MB (gcc, libc6-dev, make, python3, minbase).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
root=${CDT_OLD_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/cudnn-trace-dev/bullseye}
mirror=${CDT_DEBIAN_MIRROR:-}
while [ $# -gt 0 ]; do
  case $1 in
    --root) root=$2; shift 2 ;;
    --mirror) mirror=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "usage: $0 [--root DIR] [--mirror URL] -- COMMAND..." >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--root DIR] [--mirror URL] -- COMMAND..." >&2; exit 2; }
skip() { echo "SKIP: old-glibc-root: $*" >&2; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot, mount namespaces)"
if [ ! -e "$root/.cdt-complete" ]; then
  if [ -z "$mirror" ]; then
    mirror=$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/*$/\1/p; s/^deb  *\(http[^ ]*\/debian\)\/* .*/\1/p' \
               /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null | head -1 || true)
    mirror=${mirror:-http://deb.debian.org/debian}
  fi
  if ! command -v debootstrap >/dev/null; then
    { apt-get install -y -q debootstrap || { apt-get update -q && apt-get install -y -q debootstrap; }; } \
      >/dev/null 2>&1 || skip "debootstrap is not installed and apt-get cannot install it"
  fi
  if command -v curl >/dev/null; then
    curl -fsS -m 30 -o /dev/null "$mirror/dists/bullseye/Release" 2>/dev/null \
      || skip "cannot reach $mirror/dists/bullseye/Release"
  fi
  rm -rf "$root" "$root.tmp"
  mkdir -p "$(dirname "$root")"
  echo "old-glibc-root: debootstrap bullseye into $root from $mirror (about a minute)" >&2
  if ! debootstrap --variant=minbase --include=gcc,libc6-dev,make,python3 \
         bullseye "$root.tmp" "$mirror" >"$root.log" 2>&1; then
    tail -5 "$root.log" >&2
    rm -rf "$root.tmp"
    skip "debootstrap failed (log: $root.log)"
  fi
  mv "$root.tmp" "$root"
  touch "$root/.cdt-complete"
fi

exec unshare --mount --propagation private -- bash -s -- "$root" "$repo" "$@" <<'INNER'
set -euo pipefail
root=$1 repo=$2; shift 2
# The root a mount point of its own, so that a test can make a mount
# namespace of its own inside (unshare needs / to be one).
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mkdir -p "$root$repo"
mount --bind "$repo" "$root$repo"
for b in ${CDT_OLD_ROOT_BINDS:-}; do
  mkdir -p "$root$b"
  mount --bind "$b" "$root$b"
done
# shellcheck disable=SC2086 # CDT_OLD_ROOT_ENV is a list of K=V words
exec chroot "$root" /usr/bin/env -i \
  PATH="${CDT_OLD_ROOT_PATH:+$CDT_OLD_ROOT_PATH:}/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  HOME=/root TERM=dumb LANG=C.UTF-8 ${CDT_OLD_ROOT_ENV:-} \
  bash -c 'cd "$0" && exec "$@"' "$repo" "$@"
INNER
