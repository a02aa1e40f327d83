#!/usr/bin/env bash
# run.sh: the cudnn-trace benchmark suite (issue 10). Installs its tools, builds
# the release CLI and the benchmark programs, measures, and writes the results
# page.
#
# usage: bench/run.sh [--quick | --full] [--only SECTIONS] [--out DIR] [--doc FILE]
#                     [--label TEXT] [--shim LIBCDTRACE_SO] [--baseline LIBCDTRACE_SO]
#                     [--baseline-cli CUDNN_TRACE_BIN] [--no-install]
#
#   (default)     the figures of record, about 20 minutes on a 2-core machine
#   --quick       a smoke run of a few minutes (smaller sizes, fewer rounds)
#   --full        also the gigabyte cases of `report` (one file of 256 MB,
#                 512 MB and 1 GB, 10,000 files totalling 1 GB, 500,000 and a
#                 million load/unload cycles: about 4.5 GB of traces, generated
#                 into target/bench/work/traces and kept; delete them after);
#                 a case whose extrapolated time passes the timeout (900 s) is
#                 listed, not run (the report part takes about 5 minutes)
#   --only S,S    sections to run: events, idle, heavy, startup, memory, calls, report,
#                 progress, fleet
#                 (default: all). The page is written from what is in --out.
#   --out DIR     results folder (default bench/results/latest): JSON per section
#                 plus small raw outputs under raw/
#   --doc FILE    the page to write (default docs/benchmarks.md, and with it the
#                 README's cost table; '-' for none)
#   --label TEXT  a line under the page's title (say what state was measured)
#   --shim PATH   inject this libcdtrace.so instead of the one the CLI embeds
#                 (to compare two builds of the shim; the launcher rows still use
#                 the CLI's own)
#   --baseline PATH  section 3 also runs this libcdtrace.so (its preload helper
#                 beside it), in the same rounds as the others: a before/after
#                 comparison that the machine's drift between runs cannot blur
#   --baseline-cli PATH  section 4 also runs this cudnn-trace binary (another
#                 build of the launcher) in the same rounds, for a before/after
#   --no-install  do not apt-get missing tools; sections that need them are skipped
#
# Needs: cargo, cc, python3 (stdlib only), and from Debian: strace, valgrind,
# ltrace (installed with apt-get when missing and running as root).
# Everything built goes under target/bench/.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench=$root/bench
build=$root/target/bench
read -ra cc_cmd <<<"${CC:-cc}"

die() { echo "bench/run.sh: $*" >&2; exit 2; }
say() { printf '\n==> %s\n' "$*" >&2; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

# ---- options -----------------------------------------------------------------

mode=default only="" out=$bench/results/latest doc=$root/docs/benchmarks.md label="" shim="" baseline="" baseline_cli=""
install=1
command_line="bench/run.sh $*"
while [ $# -gt 0 ]; do
    case $1 in
        --quick) mode=quick; shift ;;
        --full) mode=full; shift ;;
        --only) only=${2:?--only needs a list}; shift 2 ;;
        --out) out=${2:?--out needs a directory}; shift 2 ;;
        --doc) doc=${2:?--doc needs a file}; shift 2 ;;
        --label) label=${2?--label needs a text}; shift 2 ;;
        --shim) shim=${2:?--shim needs a path}; shift 2 ;;
        --baseline) baseline=${2:?--baseline needs a path}; shift 2 ;;
        --baseline-cli) baseline_cli=${2:?--baseline-cli needs a path}; shift 2 ;;
        --no-install) install=0; shift ;;
        -h | --help) usage ;;
        *) die "unknown option '$1' (try --help)" ;;
    esac
done
all_sections=events,idle,heavy,startup,memory,calls,report,progress,fleet
only=${only:-$all_sections}
IFS=, read -ra wanted <<<"$only"
for s in "${wanted[@]}"; do
    [[ ,$all_sections, == *,"$s",* ]] || die "unknown section '$s' (know $all_sections)"
done
[ -z "$shim" ] || [ -f "$shim" ] || die "--shim $shim: no such file"
[ -z "$baseline" ] || [ -f "$baseline" ] || die "--baseline $baseline: no such file"
[ -z "$baseline_cli" ] || [ -x "$baseline_cli" ] || die "--baseline-cli $baseline_cli: not an executable file"

# ---- tools ---------------------------------------------------------------------

# Which Debian tools each section needs (and the package that has them).
needs_of() {
    case $1 in
        events | idle) echo strace valgrind ;;
        heavy) echo strace valgrind ltrace ;;
        startup | calls) echo valgrind ;;
        *) echo "" ;;  # memory, report, progress, fleet: nothing beyond the build
    esac
}

missing_tools() {
    local t
    for t in "$@"; do command -v "$t" >/dev/null || printf '%s\n' "$t"; done
}

# Installs the missing tools when we are root and apt-get works; otherwise
# says what is missing. Never fails the run: sections without their tools are
# skipped afterwards, each with its reason.
install_tools() {
    local -a want=() missing sections t
    local s
    IFS=, read -ra sections <<<"$only"
    for s in "${sections[@]}"; do read -ra t <<<"$(needs_of "$s")"; want+=(${t[@]+"${t[@]}"}); done
    mapfile -t missing < <(missing_tools ${want[@]+"${want[@]}"} | sort -u)
    [ ${#missing[@]} -gt 0 ] || return 0
    if [ "$install" = 0 ]; then
        echo "missing ${missing[*]} (--no-install)" >&2
    elif [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
        echo "missing ${missing[*]}: not root or no apt-get; install them with" \
            "'sudo apt-get install ${missing[*]}'" >&2
    else
        say "installing ${missing[*]} (apt-get)"
        # The package lists may be absent (fresh container): update once on failure.
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" \
            >&2 || { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y \
            --no-install-recommends "${missing[@]}" >&2; } ||
            echo "apt-get could not install ${missing[*]}" >&2
    fi
}

# The sections of --only whose tools are all present; prints the others'
# reasons on stderr.
runnable_sections() {
    local -a sections t keep=()
    local s gone
    IFS=, read -ra sections <<<"$only"
    for s in "${sections[@]}"; do
        read -ra t <<<"$(needs_of "$s")"
        gone=$(missing_tools ${t[@]+"${t[@]}"} | tr '\n' ' ')
        if [ -n "$gone" ]; then
            echo "skipping section $s: needs ${gone% }" >&2
        else
            keep+=("$s")
        fi
    done
    (IFS=,; echo "${keep[*]-}")
}

# ---- building -----------------------------------------------------------------

# The binary users get (the wheel's, the tarball's): statically linked, the
# shim and the probe helper embedded.
cli=$root/target/release-static/dist/cudnn-trace
build_cli() {
    say "building the release CLI (scripts/release-build.sh: static, it embeds the shim)"
    "$BASH" "$root/scripts/release-build.sh" >&2
}

cc_() { "${cc_cmd[@]}" -O2 -Wall -Wextra "$@"; }

# The benchmark programs and the library they load. benchlib.so is built
# under a CUDA-family name (recorded), a plain name (not recorded), and with
# a SONAME placeholder that the dlopen-heavy section turns into 1,000 copies.
build_programs() {
    say "building the benchmark programs (target/bench)"
    mkdir -p "$build/bin" "$build/lib"
    local p
    for p in dlloop dlheavy memprobe runrss; do
        cc_ -o "$build/bin/$p" "$bench/c/$p.c"
    done
    # Static like the release launcher, whose start-up it is the floor of.
    cc_ -static -o "$build/bin/spawn_floor" "$bench/c/spawn_floor.c"
    local name
    for name in libcublas_bench.so libplain_bench.so libcublas_bench_XXXX.so; do
        cc_ -shared -fPIC -Wl,-soname,"$name" -o "$build/lib/$name" "$bench/c/benchlib.c"
    done
    # A fake cuDNN 9 (tests/fixtures) for the wrapped-call section; the
    # program links graph, which implements cudnnGetVersion, through DT_RPATH.
    "$BASH" "$root/tests/fixtures/build-stack.sh" cudnn9 "$build/stack" --version 9.19.0 --cuda 13.0
    cc_ -I"$root/tests/fixtures/stack" -o "$build/bin/wrapcall" "$bench/c/wrapcall.c" \
        -L"$build/stack" -l:libcudnn_graph.so.9 \
        -Wl,--disable-new-dtags,-rpath,"$build/stack" -Wl,-z,lazy
}

# ---- main ------------------------------------------------------------------------

install_tools
to_run=$(runnable_sections)
build_cli
build_programs
mkdir -p "$out"
if [ -n "$to_run" ]; then
    say "measuring ($mode): $to_run"
    python3 "$bench/tools/suite.py" --mode "$mode" --root "$root" --build "$build" \
        --cli "$cli" --out "$out" --only "$to_run" \
        --command "$command_line" ${shim:+--shim "$shim"} ${baseline:+--baseline "$baseline"} ${baseline_cli:+--baseline-cli "$baseline_cli"}
fi
if [ "$doc" != - ]; then
    say "writing $doc"
    # The README's cost table follows the page of record, not a page elsewhere.
    readme=()
    if [ "$doc" = "$root/docs/benchmarks.md" ]; then
        readme=(--readme "$root/README.md")
    fi
    python3 "$bench/tools/render.py" --results "$out" --doc "$doc" --label "$label" \
        ${readme[@]+"${readme[@]}"}
fi
