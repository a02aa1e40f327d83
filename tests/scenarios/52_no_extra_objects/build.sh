#!/usr/bin/env bash
# main  a plain C program (DT_NEEDED libc.so.6 only) that lists its own link map
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
"$CC" -o "$B/main" "$S/main.c" -ldl
