#!/usr/bin/env bash
set -euo pipefail
B=$1; S=$(cd "$(dirname "$0")" && pwd); CC=${CC:-cc}
mkdir -p "$B"
"$CC" -O2 -o "$B/main" "$S/main.c" -lpthread -ldl
