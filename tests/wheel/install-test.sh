#!/usr/bin/env bash
# install-test.sh WHEEL [TARBALL]
#
# What a user of the wheel gets (issue 12), checked in a fresh virtual
# environment with no Rust on PATH and an empty HOME:
#   - `cudnn-trace` is on the environment's PATH, and `python -m cudnn_trace`
#     is the same command (same version, same output, same environment and
#     signal dispositions for the traced program, the version probe through
#     /proc/self/exe working);
#   - the shim the binary embeds is extracted into the user's cache and
#     works, the preload helper included (a failed dlopen recorded when it
#     returns, with the loader's error text);
#   - the bundled example runs (`python -m cudnn_trace.example`);
#   - `cudnn_trace.report(DIR)` is the document of `cudnn-trace report --json DIR`;
#   - the binary is found for `pip install --target`, `--prefix` and `--user`.
# With TARBALL, its binary also runs a traced program from an unpacked copy.
#
# Needs python3 with venv, and a C compiler for the example. Prints "ok: …"
# for each check; exits 1 at the first failure.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 WHEEL [TARBALL]" >&2; exit 2; }
wheel=$(realpath "$1")
tarball=${2:+$(realpath "$2")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install-test: FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

venv=$tmp/venv
home=$tmp/home
mkdir -p "$home" "$tmp/work"
python3 -m venv "$venv"
# Everything below runs like this: the environment's bin and the system's,
# nothing else (no ~/.cargo/bin), an empty HOME.
clean() { env -i HOME="$home" PATH="$venv/bin:/usr/bin:/bin" LANG=C.UTF-8 "$@"; }

# The wheel has no dependencies: no index needed.
clean pip install -q --no-index --disable-pip-version-check "$wheel"
ok "pip install ${wheel##*/}"

# ---- the command ---------------------------------------------------------------------
clean sh -c '! command -v cargo && ! command -v rustc' >/dev/null || fail "Rust is on the clean PATH"
where=$(clean sh -c 'command -v cudnn-trace') || fail "cudnn-trace is not on the venv's PATH"
[ "$where" = "$venv/bin/cudnn-trace" ] || fail "cudnn-trace found at $where, not in the venv"
ok "cudnn-trace is $where (no cargo or rustc on PATH)"

version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -1)
v_bin=$(clean cudnn-trace --version)
v_py=$(clean python -m cudnn_trace --version)
v_mod=$(clean python -c 'import cudnn_trace; print(cudnn_trace.__version__)')
[ "$v_bin" = "cudnn-trace $version" ] || fail "cudnn-trace --version: $v_bin"
[ "$v_py" = "$v_bin" ] || fail "python -m cudnn_trace --version: $v_py"
[ "$v_mod" = "$version" ] || fail "cudnn_trace.__version__: $v_mod"
ok "cudnn-trace --version = python -m cudnn_trace --version = $v_bin; cudnn_trace.__version__ = $v_mod"

# python -m cudnn_trace is the binary: the same exit status, and the traced
# program gets what it gets from cudnn-trace itself (Python ignores SIGPIPE
# and SIGXFSZ, and adds LC_CTYPE=C.UTF-8 in the C locale: neither reaches it).
show='grep -E "^(SigIgn|SigBlk)" /proc/self/status; env | grep -E "^(LC_|LANG)" | sort; exit 7'
for launcher in "cudnn-trace" "python -m cudnn_trace"; do
  set +e
  # shellcheck disable=SC2086 # the launcher is two words on purpose
  env -i HOME="$home" PATH="$venv/bin:/usr/bin:/bin" LANG=C $launcher -q --out "$tmp/sig-${launcher// /_}" \
    -- sh -c "$show" >"$tmp/sig-${launcher// /_}.txt" 2>/dev/null
  echo "exit $?" >>"$tmp/sig-${launcher// /_}.txt"
  set -e
done
diff "$tmp/sig-cudnn-trace.txt" "$tmp/sig-python_-m_cudnn_trace.txt" \
  || fail "the program traced through python -m cudnn_trace saw something else (above)"
grep -q '^LC_CTYPE' "$tmp/sig-cudnn-trace.txt" && fail "LC_CTYPE appeared in the traced program's environment"
grep -qx 'exit 7' "$tmp/sig-cudnn-trace.txt" || fail "exit status not passed on: $(cat "$tmp/sig-cudnn-trace.txt")"
ok "a program traced by python -m cudnn_trace: same signal dispositions, environment and exit status (7) as by cudnn-trace"
sed 's/^/    /' "$tmp/sig-cudnn-trace.txt"

# ---- the shim, from where pip put the binary --------------------------------------------
# A failed dlopen (ctypes, as a framework's loader does): the preload helper
# records it the moment dlopen returns, the dlerror text when Python reads it.
set +e
clean cudnn-trace -q --out "$tmp/t-fail" -- python -c '
import ctypes
try:
    ctypes.CDLL("libcudnn.so.9")
except OSError as e:
    print("python:", e)
' >"$tmp/t-fail.out" 2>&1
rc=$?
set -e
[ "$rc" = 0 ] || fail "traced python exited $rc: $(cat "$tmp/t-fail.out")"
python3 - "$tmp/t-fail" <<'EOF' || fail "the trace of the failed dlopen (above)"
import glob, json, os, sys
out = sys.argv[1]
files = glob.glob(os.path.join(out, "*.jsonl"))
assert len(files) == 1, files
lines = [json.loads(l) for l in open(files[0])]
head, events = lines[0], lines[1:]
env = head["env"]
audit, preload = env["LD_AUDIT"], env["LD_PRELOAD"]
# Extracted from the binary into the launcher's cache (~/.cache/cudnn-trace,
# or for root /var/cache/cudnn-trace or /tmp/cudnn-trace-0), in a directory
# named by version and content hash: not looked up beside the wheel.
leaf = os.path.basename(os.path.dirname(audit))
import re
assert audit.endswith("/libcdtrace.so") and re.fullmatch(re.escape(head["shim"]) + "-[0-9a-f]{16}", leaf), audit
assert preload == os.path.join(os.path.dirname(audit), "libcdtrace_preload.so"), preload
assert os.path.isfile(audit) and os.path.isfile(preload)
assert head["preload"] is True, head
failed = [e for e in events if e.get("ev") == "load_failed" and e.get("name") == "libcudnn.so.9"]
assert failed and failed[0]["via"] == "dlopen", events
errs = [e for e in events if e.get("ev") == "dlerror" and e.get("req") == failed[0]["seq"]]
assert errs and "libcudnn.so.9: cannot open shared object file" in errs[0]["error"], events
print("ok: shim extracted to", audit, "(+ libcdtrace_preload.so); the failed dlopen of libcudnn.so.9 "
      "recorded via dlopen, with dlerror:", repr(errs[0]["error"]))
EOF
bash "$repo/scripts/glibc-floor.sh" --max 2.17 --cli "$venv/bin/cudnn-trace" "$venv/bin/cudnn-trace" \
  | sed 's/^/    /' || fail "glibc floor of the installed binary and its shim"
ok "the installed binary and the shim files it extracts need glibc 2.17 at most"

# ---- the bundled example --------------------------------------------------------------
(cd "$tmp/work" && clean python -m cudnn_trace.example) >"$tmp/example.log" 2>&1 \
  || { cat "$tmp/example.log"; fail "python -m cudnn_trace.example"; }
grep -q "run.sh: everything behaved as expected" "$tmp/example.log" || fail "the example's last line"
ok "python -m cudnn_trace.example (in a new directory):"
grep -E '^(==>|\$ |cudnn-trace: [0-9]+ error|run.sh:)' "$tmp/example.log" | sed 's/^/    /'
ex=$tmp/work/cudnn-trace-example/target/example

# ---- cudnn_trace.report is report --json -------------------------------------------------
clean cudnn-trace report --json "$ex/trace" >"$tmp/report.json"
clean python -m cudnn_trace report --json "$ex/trace" >"$tmp/report-m.json"
cmp -s "$tmp/report.json" "$tmp/report-m.json" || fail "python -m cudnn_trace report --json differs"
clean python - "$ex/trace" "$tmp/report.json" <<'EOF' || fail "cudnn_trace.report (above)"
import json, sys
import cudnn_trace
doc = cudnn_trace.report(sys.argv[1])
with open(sys.argv[2]) as f:
    cli = json.load(f)
assert doc == cli, "cudnn_trace.report differs from report --json"
codes = [f["code"] for f in doc["findings"]]
assert codes[:2] == ["CDT008", "CDT010"], codes
# A version the CLI asked the library itself for, in a child of the binary
# (/proc/self/exe): the probe works when the binary was started by Python too.
kinds = {l["version"].get("kind") for p in doc["processes"] for l in p["libraries"] if l.get("version")}
ignored = cudnn_trace.report(sys.argv[1], ignore=["CDT002"])
assert "CDT002" not in [f["code"] for f in ignored["findings"]], ignored["findings"]
try:
    cudnn_trace.report(sys.argv[1] + "/nonexistent")
except cudnn_trace.ReportError as e:
    missing = "ReportError(returncode={}): {}".format(e.returncode, e)
else:
    raise AssertionError("no ReportError for a missing directory")
print("ok: cudnn_trace.report(trace) == report --json (report_version {}, {} processes, findings {}, "
      "version kinds {}); ignore=['CDT002'] leaves it out; a missing path: {}".format(
          doc["report_version"], len(doc["processes"]), codes, sorted(k for k in kinds if k), missing))
EOF

# The version probe re-executes /proc/self/exe: through python -m it must be
# the binary, not Python. The pin check asks the pinned copy's libraries
# their versions in that child.
pin=$ex/site-packages/nvidia/cudnn/lib
for launcher in "cudnn-trace" "python -m cudnn_trace"; do
  # shellcheck disable=SC2086
  clean $launcher env --pin "$pin" >"$tmp/pin-${launcher// /_}.txt" 2>&1 \
    || { cat "$tmp/pin-${launcher// /_}.txt"; fail "$launcher env --pin"; }
done
diff "$tmp/pin-cudnn-trace.txt" "$tmp/pin-python_-m_cudnn_trace.txt" || fail "env --pin differs through python -m"
# "built with CUDA 13.0" is cudnnGetCudartVersion()'s answer in the probe child.
grep -q "cuDNN 9.19.0 built with CUDA 13.0" "$tmp/pin-python_-m_cudnn_trace.txt" \
  || { cat "$tmp/pin-python_-m_cudnn_trace.txt"; fail "env --pin through python -m: no probe answer"; }
ok "env --pin (the probe child, /proc/self/exe, answered) is the same through python -m cudnn_trace:"
sed -n 1p "$tmp/pin-python_-m_cudnn_trace.txt" | sed 's/^/    /'

# ---- other install schemes ---------------------------------------------------------------
pyver=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
clean pip install -q --no-index --disable-pip-version-check --target "$tmp/tgt" "$wheel"
got=$(clean env PYTHONPATH="$tmp/tgt" python -c 'import cudnn_trace; print(cudnn_trace.binary())')
[ "$got" = "$tmp/tgt/bin/cudnn-trace" ] || fail "pip install --target: binary() is $got"
clean env PYTHONPATH="$tmp/tgt" python -m cudnn_trace --version >/dev/null || fail "--target: python -m cudnn_trace"
ok "pip install --target: cudnn_trace.binary() = $got"
# (--ignore-installed: the venv has it already, which pip would call satisfied)
clean pip install -q --no-index --disable-pip-version-check --ignore-installed --prefix "$tmp/pfx" "$wheel"
got=$(clean env PYTHONPATH="$tmp/pfx/lib/python$pyver/site-packages" python -c 'import cudnn_trace; print(cudnn_trace.binary())')
[ "$got" = "$tmp/pfx/bin/cudnn-trace" ] || fail "pip install --prefix: binary() is $got"
ok "pip install --prefix: cudnn_trace.binary() = $got"
# --user needs an interpreter outside any venv with pip: the system's (on
# Debian, PEP 668 asks for --break-system-packages; PYTHONUSERBASE keeps it
# in the test's directory).
if /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
  ub=$tmp/userbase
  env -i HOME="$home" PATH=/usr/bin:/bin PYTHONUSERBASE="$ub" /usr/bin/python3 -m pip install -q --user \
    --no-index --disable-pip-version-check --break-system-packages "$wheel" 2>/dev/null \
    || env -i HOME="$home" PATH=/usr/bin:/bin PYTHONUSERBASE="$ub" /usr/bin/python3 -m pip install -q --user \
      --no-index --disable-pip-version-check "$wheel"
  got=$(env -i HOME="$home" PATH=/usr/bin:/bin PYTHONUSERBASE="$ub" /usr/bin/python3 -c 'import cudnn_trace; print(cudnn_trace.binary())')
  [ "$got" = "$ub/bin/cudnn-trace" ] || fail "pip install --user: binary() is $got"
  env -i HOME="$home" PATH=/usr/bin:/bin PYTHONUSERBASE="$ub" /usr/bin/python3 -m cudnn_trace --version >/dev/null \
    || fail "--user: python -m cudnn_trace"
  ok "pip install --user (/usr/bin/python3 $(/usr/bin/python3 -c 'import sys; print(sys.version.split()[0])')): cudnn_trace.binary() = $got"
else
  echo "note: /usr/bin/python3 has no pip: pip install --user not checked"
fi

# ---- the tarball -----------------------------------------------------------------------
if [ -n "$tarball" ]; then
  mkdir -p "$tmp/usr"
  tar -xzf "$tarball" -C "$tmp/usr" --strip-components=1
  [ -f "$tmp/usr/share/man/man1/cudnn-trace.1" ] || fail "no man page in the tarball"
  env -i HOME="$home" PATH="$tmp/usr/bin:/usr/bin:/bin" cudnn-trace -q --out "$tmp/t-tar" -- true \
    || fail "the tarball's cudnn-trace -- true"
  cmp -s "$tmp/usr/bin/cudnn-trace" "$venv/bin/cudnn-trace" || fail "the tarball's binary is not the wheel's"
  ok "the tarball (${tarball##*/}): unpacked, its cudnn-trace traces a program; the same binary as the wheel's; $(cd "$tmp/usr" && find . -type f | wc -l) files"
fi
echo "install-test: all checks passed"
