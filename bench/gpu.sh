#!/usr/bin/env bash
# gpu.sh: the GPU figure of issue 10, for the GPU machine. Runs a PyTorch import
# plus one cuDNN convolution (tests/gpu/torch_conv.py) bare and under cudnn-trace
# in interleaved rounds, and prints median, min and max of each and the
# traced/bare ratio (target: at most 1.01 over at least 10 runs), of wall time
# and of CPU time (user + system of the process tree, from wait4: steadier
# than wall time, whose spread on a GPU program's start-up is wider than 1 %). JAX
# (tests/gpu/jax_conv.py) is measured too when it imports.
#
# Three sides: bare; "shim", the program with the launcher's environment
# (LD_AUDIT, LD_PRELOAD, CUDNN_TRACE_*) but no launcher, which is what a
# production process pays; and "traced", the whole launcher, which adds its
# own start-up, the stderr copy and the end-of-run report on top.
#
# usage: bench/gpu.sh [CUDNN_TRACE_BINARY] [OUT_DIR]
#   binary default: target/release-static/dist/cudnn-trace (scripts/release-build.sh: the
#   static release binary, which runs on any x86_64 glibc machine)
#   OUT_DIR default: /tmp/cudnn-trace-gpu-bench (JSON results, one per framework)
# environment: RUNS (default 15; 0: instruction counts only), PYTHON (default python3), SCRIPTS (default
#   "torch_conv.py jax_conv.py"; files in tests/gpu, or paths), COUNT_RUNS
#   (default 5; 0: no instruction counts), STARTUP_RUNS (default 300; 0: no
#   start-up section: /bin/true and `python -c pass`, bare, shim alone, launcher)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:-$root/target/release-static/dist/cudnn-trace}
out=${2:-/tmp/cudnn-trace-gpu-bench}
runs=${RUNS:-15}
read -ra scripts <<<"${SCRIPTS:-torch_conv.py jax_conv.py}"

die() { echo "bench/gpu.sh: $*" >&2; exit 2; }
[ -x "$bin" ] || die "no cudnn-trace binary at $bin (build it: scripts/release-build.sh)"
[ "$runs" -eq 0 ] || [ "$runs" -ge 10 ] || die "RUNS=$runs: the figure needs at least 10 runs (0: instruction counts only)"
mkdir -p "$out"

# The interpreter itself: a wrapper script (pyenv, conda's python3 shim) would
# add its own start-up to both sides and dilute the ratio. Not its real path:
# a virtual environment's python is a symlink that finds its pyvenv.cfg (and
# with it the environment's packages) only when run by that name.
py=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)')

echo "host: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)" \
    "glibc $(getconf GNU_LIBC_VERSION | cut -d' ' -f2) python $py"
echo "cudnn-trace: $("$bin" --version)"

# The environment the launcher gives its program, read from a child of one
# launcher run (the shim stays in its cache after the run): the "shim" side.
shim_env=()
while IFS= read -r kv; do
    case $kv in CUDNN_TRACE_DIR=*) ;; LD_AUDIT=* | LD_PRELOAD=* | CUDNN_TRACE_*) shim_env+=("$kv") ;; esac
done < <("$bin" -q --out "$out/env-probe" -- env)
rm -rf "$out/env-probe"
[ "${#shim_env[@]}" -gt 0 ] || die "the launcher gave its child no LD_AUDIT"
echo "shim side: ${shim_env[*]}"

# bench_one SCRIPT: bare, shim-only and traced runs of SCRIPT, interleaved; skipped when
# the script's framework does not import.
bench_one() {
    local script=$1 name
    [ -f "$script" ] || script=$root/tests/gpu/$script
    name=$(basename "$script" .py)
    if ! "$py" "$script" >/dev/null 2>&1; then
        echo "== $name: skipped (the script does not run bare here)"
        return 0
    fi
    # The three sides, as compare.py and count.py take them.
    # The shim's variables are compare.py's VAR=VALUE words, not env(1)'s:
    # no further exec counts as the program's.
    local sides=(
        :: bare "$py" "$script"
        :: shim "${shim_env[@]}" CUDNN_TRACE_DIR='{tmp}' "$py" "$script"
        :: traced "$bin" -q --out '{tmp}/trace' -- "$py" "$script"
    )
    if [ "$runs" -gt 0 ]; then
        echo "== $name: $runs interleaved rounds (plus one warm-up), wall and CPU time of the whole process"
        python3 "$root/bench/tools/compare.py" --runs "$runs" --json "$out/$name.json" "${sides[@]}"
    fi
    # Instructions retired in user space, where the hardware counter is
    # exposed: steadier than either time (bench/tools/count.py).
    if [ "$count_runs" -gt 0 ]; then
        echo "== $name: $count_runs interleaved rounds (plus one warm-up), user-space instructions of the process tree"
        python3 "$root/bench/tools/count.py" --runs "$count_runs" \
            --json "$out/$name-instructions.json" "${sides[@]}"
    fi
}

# The hardware instruction counter, when this machine exposes it to us.
count_runs=${COUNT_RUNS:-5}
if ! python3 "$root/bench/tools/count.py" --runs 1 --warmup 0 :: a true :: b true >/dev/null 2>&1; then
    echo "no user-space instruction counter here (perf_event_open): instruction counts skipped"
    count_runs=0
fi

# loads_of SCRIPT: what the shim's cost scales with, for a bound that no
# timing noise blurs: objects the loader mapped (LD_DEBUG=files, bare run),
# lines the trace holds (traced run; each a recorded event) and the traced
# process's CPU seconds. docs/benchmarks.md (section 8) multiplies them by
# the instructions per event and per load measured on the development
# machine.
loads_of() {
    local script=$1 name objects lines
    [ -f "$script" ] || script=$root/tests/gpu/$script
    name=$(basename "$script" .py)
    "$py" "$script" >/dev/null 2>&1 || return 0
    objects=$(LD_DEBUG=files "$py" "$script" 2>&1 >/dev/null | grep -c 'generating link map' || true)
    rm -rf "$out/$name-trace"
    "$bin" -q --out "$out/$name-trace" -- "$py" "$script" >/dev/null 2>&1
    lines=$(cat "$out/$name-trace"/*.jsonl | wc -l)
    echo "== $name: $objects objects mapped (bare), $lines trace lines in $(ls "$out/$name-trace"/*.jsonl | wc -l) files (traced)"
}

# The launcher's fixed cost on this host (section 4's /bin/true and
# `python3 -c pass` targets, measured where the programs really run):
# bare; the shim alone (its variables set by compare.py itself, as in §4 of
# the suite: through env(1) its exec counted as the shim's); the launcher
# with -q and with its summary.
startup() {
    local prog=("$@") name
    name=$(basename "${prog[0]}")
    echo "== start-up of ${prog[*]}: $startup_runs interleaved rounds (plus 10 warm-up), milliseconds"
    python3 "$root/bench/tools/compare.py" --runs "$startup_runs" --warmup 10 \
        --json "$out/startup-$name.json" \
        :: bare "${prog[@]}" \
        :: shim "${shim_env[@]}" CUDNN_TRACE_DIR='{tmp}' "${prog[@]}" \
        :: quiet "$bin" -q --out '{tmp}/trace' -- "${prog[@]}" \
        :: summary "$bin" --out '{tmp}/trace' -- "${prog[@]}"
}
startup_runs=${STARTUP_RUNS:-300}
if [ "$startup_runs" -gt 0 ]; then
    startup /bin/true
    startup "$py" -c pass
fi

for s in "${scripts[@]}"; do
    bench_one "$s"
done
for s in "${scripts[@]}"; do
    loads_of "$s"
done
echo "results: $out (the 'ratio' column is the figure, target <= 1.01: 'shim' is the traced process alone, 'traced' the launcher around it)"
