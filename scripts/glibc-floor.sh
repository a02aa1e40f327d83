#!/usr/bin/env bash
# glibc-floor.sh [--max X.Y] [--cli CUDNN_TRACE]... [FILE]...
#
# The glibc floor of ELF files: for each FILE, its DT_NEEDED list and the
# highest GLIBC_x.y symbol version it needs (an imported symbol's version,
# or any version-need entry: glibc refuses a missing version even when every
# symbol that uses it is weak). Fails (exit 1) when one is above MAX
# (default 2.17), listing the symbols that are.
#
# --cli CUDNN_TRACE: also check the files embedded in that cudnn-trace
# binary, exactly as it extracts them: the two shim files for a traced
# program (it runs `CUDNN_TRACE -- true` and takes the files its LD_AUDIT
# names) and the version probe helper beside them (it runs an empty probe,
# `CUDNN_TRACE __probe-cudnn --ask '[]'`). The binary itself is checked only
# when it is also given as a FILE (the development build of the CLI follows
# the host's glibc; a release build is static: scripts/release-build.sh).
#
# Needs only readelf (binutils, which comes with the C compiler's linker).
set -euo pipefail

max=2.17
clis=()
files=()
while [ $# -gt 0 ]; do
  case $1 in
    --max) max=$2; shift 2 ;;
    --cli) clis+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    --) shift; files+=("$@"); break ;;
    -*) echo "glibc-floor: unknown option $1" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done

command -v readelf >/dev/null || { echo "glibc-floor: readelf (binutils) is needed" >&2; exit 2; }

# Version a is above version b.
above() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -1)" = "$1" ]; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for cli in "${clis[@]}"; do
  [ -x "$cli" ] || { echo "glibc-floor: $cli is not an executable" >&2; exit 2; }
  out=$tmp/trace-${#files[@]}
  if ! XDG_CACHE_HOME=$tmp/cache "$cli" --out "$out" -- true >"$tmp/cli.log" 2>&1; then
    echo "glibc-floor: $cli -- true failed:" >&2; cat "$tmp/cli.log" >&2; exit 2
  fi
  # The shim the launcher gave the program: LD_AUDIT in the trace's header
  # (wherever the launcher's cache is); its preload helper sits next to it.
  shim=$(cat "$out"/*.jsonl | head -1 | grep -o '"LD_AUDIT":"[^"]*"' | sed 's/.*:"\(.*\)"/\1/' || true)
  case $shim in
    */libcdtrace.so) files+=("$shim" "${shim%/*}/libcdtrace_preload.so") ;;
    *) echo "glibc-floor: no shim in the LD_AUDIT of $cli's trace (${shim:-none})" >&2; exit 2 ;;
  esac
  answers=$(XDG_CACHE_HOME=$tmp/cache "$cli" __probe-cudnn --ask '[]' 2>"$tmp/cli.log") || true
  if [ "$answers" != "[]" ]; then
    echo "glibc-floor: $cli __probe-cudnn --ask '[]' printed ${answers:-nothing}:" >&2; cat "$tmp/cli.log" >&2; exit 2
  fi
  files+=("${shim%/*}/cdtrace-probe")
done
[ ${#files[@]} -gt 0 ] || { echo "usage: $0 [--max X.Y] [--cli CUDNN_TRACE]... [FILE]..." >&2; exit 2; }

status=0
for f in "${files[@]}"; do
  [ -f "$f" ] || { echo "glibc-floor: $f: no such file" >&2; status=2; continue; }
  needed=$(readelf -dW "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | paste -sd' ')
  # --dyn-syms -W: "Num: Value Size Type Bind Vis Ndx Name@VERSION (n)"; Ndx UND = imported.
  refs=$(readelf --dyn-syms -W "$f" | awk '$7=="UND" && $8 ~ /@GLIBC_[0-9]/ {
           split($8, a, "@GLIBC_"); v=a[2]; sub(/ .*/, "", v); print v, a[1] }')
  vneed=$(readelf -VW "$f" | sed -n 's/.*Name: GLIBC_\([0-9.]*\).*/\1/p')
  top=$(printf '%s\n%s\n' "$(printf '%s\n' "$refs" | awk 'NF{print $1}')" "$vneed" \
          | awk NF | sort -uV | tail -1)
  echo "$f"
  echo "  needed: ${needed:-none}"
  echo "  glibc:  ${top:-none} (at most $max allowed)"
  if [ -n "$top" ] && above "$top" "$max"; then
    echo "  symbols above $max:"
    printf '%s\n' "$refs" | awk NF | while read -r v s; do
      if above "$v" "$max"; then echo "    $s@GLIBC_$v"; fi
    done | sort -u
    status=1
  fi
done
exit $status
