#!/usr/bin/env bash
# old-glibc.sh WHEEL [TARBALL]
#
# install-test.sh inside the Debian 11 root of scripts/old-glibc-root.sh:
# the manylinux wheel installed by Debian 11's own pip (20.3) into a Python
# 3.9 venv on glibc 2.31, and everything install-test.sh checks there (the
# binary, python -m, the shim and its preload helper, the example built by
# gcc 10, cudnn_trace.report, the tarball). The root gets python3-venv from
# its apt sources the first time (ensurepip; not in the root's package list).
#
# Exit status: install-test.sh's; 0 after a line starting "SKIP:" when the
# root cannot be had or python3-venv cannot be installed in it.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 WHEEL [TARBALL]" >&2; exit 2; }
args=()
for f in "$@"; do args+=("$(realpath "$f")"); done
set +e
"$repo/scripts/old-glibc-root.sh" -- bash -c '
  if ! python3 -c "import ensurepip" 2>/dev/null; then
    { apt-get install -y -q python3-venv || { apt-get update -q && apt-get install -y -q python3-venv; }; } \
      >/dev/null 2>&1 || { echo "SKIP: wheel on Debian 11: apt-get cannot install python3-venv in the root" >&2; exit 77; }
  fi
  echo "== $(ldd --version | head -1), $(python3 --version)"
  exec tests/wheel/install-test.sh "$@"' bash "${args[@]}"
rc=$?
set -e
if [ $rc = 77 ]; then
  echo "SKIP: the wheel's install test was not run on glibc 2.31 (see above)"
  exit 0
fi
exit $rc
