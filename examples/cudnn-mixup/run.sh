#!/usr/bin/env bash
# run.sh: the cuDNN mix-up that breaks PyTorch installs, reproduced with fake
# libraries (no GPU needed) and shown by cudnn-trace.
#
# usage: examples/cudnn-mixup/run.sh [--no-trace]
#   Runs from any directory; needs only Rust (cargo) and a C compiler (CC, default cc).
#   CUDNN_TRACE_BIN=PATH uses that cudnn-trace binary instead of building one
#   (`python -m cudnn_trace.example` runs a copy of this example that way,
#   with the binary of the installed wheel: no Rust needed).
#   --no-trace  skip the CLI: run the program directly and show the loader's
#               own account (LD_DEBUG=libs) instead of a trace.
# Exit status 0 when everything behaved as expected: the first run fails with
# PyTorch's "cuDNN version incompatibility" error, the fixed run succeeds.
#
# Everything built or written goes under target/ (target/example/).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
read -ra cc_cmd <<<"${CC:-cc}"
trace=1
case ${1-} in
    "") ;;
    --no-trace) trace=0 ;;
    *) echo "usage: $0 [--no-trace]" >&2; exit 2 ;;
esac

ex=$root/target/example
pip=$ex/site-packages/nvidia/cudnn/lib   # like a pip nvidia-cudnn-cu13 wheel
cu13=$ex/site-packages/nvidia/cu13/lib    # like the pip CUDA 13 runtime
system=$ex/system/lib                     # like apt's /usr/lib/x86_64-linux-gnu
driver=$ex/driver/lib                     # the (fake) NVIDIA driver
cli=${CUDNN_TRACE_BIN:-$root/target/release/cudnn-trace}
shown_cli=${CUDNN_TRACE_BIN:+cudnn-trace}   # how the commands below show it
shown_cli=${shown_cli:-target/release/cudnn-trace}
step() { printf '\n==> %s\n' "$*"; }

# ---- 1. the CLI ----------------------------------------------------------------
if [ "$trace" = 1 ] && [ -n "${CUDNN_TRACE_BIN-}" ]; then
    step "1/4 using $cli ($("$cli" --version))"
elif [ "$trace" = 1 ]; then
    step "1/4 building cudnn-trace (cargo build --release -p cudnn-trace)"
    (cd "$root" && cargo build --release -p cudnn-trace)
else
    step "1/4 skipped (--no-trace)"
fi

# ---- 2. two cuDNN installs, a CUDA runtime, a driver ------------------------------
step "2/4 building fake cuDNN 9.19.0 (pip) and 9.14.0 (system), cudart 13, driver 580.159.04"
rm -rf "$ex"
build=("$BASH" "$root/tests/fixtures/build-stack.sh")
"${build[@]}" cudnn9 "$pip" --version 9.19.0 --cuda 13.0
"${build[@]}" cudnn9 "$system" --version 9.14.0 --cuda 13.0 --versioned-files
"${build[@]}" cudart "$cu13" --version 13.0
"${build[@]}" cuda "$driver" --driver 580.159.04 --cuda 13.0
# What pip leaves next to a wheel it installs: its *.dist-info, whose RECORD lists
# each file with its hash and size (the report reads the version of files whose
# names have the major only, libcudnn_engines_precompiled.so.9, from it).
dist=$ex/site-packages/nvidia_cudnn_cu13-9.19.0.56.dist-info
mkdir -p "$dist"
printf 'Metadata-Version: 2.1\nName: nvidia-cudnn-cu13\nVersion: 9.19.0.56\n' >"$dist/METADATA"
(
    cd "$ex/site-packages"
    for f in nvidia/cudnn/lib/* "${dist##*/}/METADATA"; do
        hex=$(sha256sum "$f" | cut -d' ' -f1)
        # shellcheck disable=SC2059 # the hash as \xNN escapes, on purpose
        b64=$(printf "$(printf '%s' "$hex" | sed 's/../\\x&/g')" | base64 -w0 | tr '+/' '-_' | tr -d '=')
        printf '%s,sha256=%s,%s\n' "$f" "$b64" "$(stat -c %s "$f")"
    done
    printf '%s/RECORD,,\n' "${dist##*/}"
) >"$dist/RECORD"
echo "pip:    ${pip#"$root"/}: $(cd "$pip" && echo libcudnn*)"
echo "system: ${system#"$root"/}: $(cd "$system" && echo libcudnn_graph* libcudnn.so*)"

# ---- 3. the program ----------------------------------------------------------------
# Linked like libtorch_cuda.so: DT_NEEDED libcudnn.so.9 / libcudart.so.13 found
# through a DT_RPATH relative to the binary ($ORIGIN is literal here). DT_RPATH,
# unlike DT_RUNPATH, is searched before LD_LIBRARY_PATH, so the dispatcher
# always comes from the pip directory.
step "3/4 building target/example/bin/train (compiled against cuDNN 9.19.0, RPATH into pip)"
mkdir -p "$ex/bin"
"${cc_cmd[@]}" -std=gnu11 -O2 -Wall -Wextra -I"$root/tests/fixtures/stack" \
    -DCOMPILED_CUDNN=91900 "$here/train.c" -o "$ex/bin/train" \
    -L"$pip" -l:libcudnn.so.9 -L"$cu13" -l:libcudart.so.13 \
    -Wl,--disable-new-dtags,-rpath,'$ORIGIN/../site-packages/nvidia/cudnn/lib:$ORIGIN/../site-packages/nvidia/cu13/lib'

# run_train NAME LD_LIBRARY_PATH: runs train (under cudnn-trace unless --no-trace),
# output to the terminal and to $ex/NAME.log; sets $status.
run_train() {
    local name=$1 llp=$2
    echo "\$ LD_LIBRARY_PATH=${llp//$root\//} $([ "$trace" = 1 ] && echo "$shown_cli --out target/example/$name -- ")target/example/bin/train"
    set +e
    if [ "$trace" = 1 ]; then
        LD_LIBRARY_PATH=$llp "${term_env[@]}" "$cli" "${term_opts[@]}" --out "$ex/$name" -- "$ex/bin/train" 2>&1 | tee "$ex/$name.log"
        status=${PIPESTATUS[0]}
    else
        LD_DEBUG=libs LD_DEBUG_OUTPUT="$ex/$name.ld-debug" LD_LIBRARY_PATH=$llp \
            "$ex/bin/train" 2>&1 | tee "$ex/$name.log"
        status=${PIPESTATUS[0]}
        echo "(LD_DEBUG=libs: the cuDNN/CUDA files this process initialised)"
        sed -n 's/^[[:space:]]*[0-9]*:[[:space:]]*calling init: \(.*libcud.*\)$/  \1/p' "$ex/$name".ld-debug.* |
            sed "s|$root/||"
    fi
    set -e
    echo "(exit status $status)"
}

# The output goes through tee (for the log): tell cudnn-trace about the
# terminal it ends up on, its width and that it takes colour.
term_env=(env) term_opts=()
if [ -t 1 ]; then
    cols=$(tput cols 2>/dev/null || echo 80)
    term_env=(env "COLUMNS=$cols")
    term_opts=(--color always)
fi

problems=0
expect() { # expect DESCRIPTION COMMAND...: counts a problem when COMMAND fails
    local what=$1; shift
    if ! "$@"; then echo "run.sh: unexpected: $what" >&2; problems=$((problems + 1)); fi
}
# recorded NAME TEXT: the trace (or loader log) of run NAME mentions TEXT.
# TEXT is a path tail: the loader may name a file .../bin/../site-packages/...
recorded() {
    if [ "$trace" = 1 ]; then grep -rqsF -- "$2" "$ex/$1"
    else grep -qsF -- "$2" "$ex/$1".ld-debug.*; fi
}
not_recorded() { ! recorded "$@"; }

# ---- 4. the mix-up, then the fix ----------------------------------------------------
step "4/4 running it the broken way: LD_LIBRARY_PATH names the system cuDNN"
run_train trace "$system:$driver"
expect "the first run should fail with exit status 1" test "$status" = 1
expect "the first run should print PyTorch's incompatibility error" \
    grep -qF "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 19, 0) but found runtime version (9, 14, 0)." "$ex/trace.log"
expect "the dispatcher should come from pip" \
    recorded trace "site-packages/nvidia/cudnn/lib/libcudnn.so.9"
expect "the system libcudnn_graph should have been loaded" \
    recorded trace "example/system/lib/libcudnn_graph.so.9"

if [ "$trace" = 1 ]; then where="The summary above shows it: libcudnn.so.9 found through the RPATH of
train, libcudnn_graph.so.9 and the engine libraries (9.14.0) through LD_LIBRARY_PATH."
else where="The loader's log above shows the same files."; fi
cat <<EOF

What happened: train found libcudnn.so.9 in the pip directory through its
DT_RPATH, as libtorch_cuda.so does, so the cuDNN dispatcher is the 9.19.0 it
was built with. But the dispatcher holds no cuDNN code: on the first call it
dlopens libcudnn_graph.so.9 by bare name, and the loader searches
LD_LIBRARY_PATH before the dispatcher's own RUNPATH (\$ORIGIN). LD_LIBRARY_PATH
names the system 9.14.0 copy, so libcudnn_graph and the engine libraries came
from target/example/system/lib, cudnnGetVersion() answered 91400 and the
program stopped with PyTorch's error: two copies of cuDNN mixed in one process.
$where
The fix is to take the system cuDNN directory out of LD_LIBRARY_PATH (on a
real machine often "unset LD_LIBRARY_PATH"; here the driver directory stays)
or to remove one of the copies. Running again with
LD_LIBRARY_PATH=target/example/driver/lib:
EOF

run_train trace-fixed "$driver"
expect "the fixed run should succeed" test "$status" = 0
expect "the fixed run should use cuDNN 9.19.0" grep -qx "conv ok cudnn 91900" "$ex/trace-fixed.log"
expect "the fixed run should load libcudnn_graph from pip" \
    recorded trace-fixed "site-packages/nvidia/cudnn/lib/libcudnn_graph.so.9"
expect "the fixed run should load nothing from the system copy" \
    not_recorded trace-fixed "example/system/lib/libcudnn"

if [ "$trace" = 1 ]; then
    cat <<EOF

Or leave LD_LIBRARY_PATH as it was and pin cuDNN to the copy the program was
built with: every cuDNN library then comes from that directory, whoever asks
for it and however (docs/pin.md).
\$ LD_LIBRARY_PATH=${system//$root\//}:${driver//$root\//} $shown_cli --out target/example/trace-pinned --pin ${pip//$root\//} -- target/example/bin/train
EOF
    set +e
    LD_LIBRARY_PATH=$system:$driver "${term_env[@]}" "$cli" "${term_opts[@]}" --out "$ex/trace-pinned" --pin "$pip" -- "$ex/bin/train" 2>&1 |
        tee "$ex/trace-pinned.log"
    status=${PIPESTATUS[0]}
    set -e
    echo "(exit status $status)"
    expect "the pinned run should succeed" test "$status" = 0
    expect "the pinned run should use cuDNN 9.19.0" grep -qx "conv ok cudnn 91900" "$ex/trace-pinned.log"
    expect "the pinned run should load nothing from the system copy" \
        not_recorded trace-pinned "example/system/lib/libcudnn"
fi

echo
if [ "$problems" = 0 ]; then
    echo "run.sh: everything behaved as expected (outputs in target/example/)"
else
    echo "run.sh: $problems unexpected result(s), see above" >&2
    exit 1
fi
