"""Measuring helpers shared by the benchmark suite (stdlib only).

* `Cmd` / `interleave`: run several commands in rounds, one run of each per
  round, in an order that rotates every round. Slow drift on the machine (a
  compile starting next door, the CPU warming up) then lands on every command
  alike instead of on whichever ran last. hyperfine runs all runs of one
  command before the next, which is why it is not used for comparisons.
* `strace_counts`: system calls by name (`strace -f -c`).
* `callgrind_instructions`: instructions executed (valgrind's callgrind; this
  machine's virtual CPU exposes no hardware counter to `perf`).
* `cachegrind_counts`: instructions and L1 cache misses (valgrind's cachegrind).
* `trace_events`: events in a trace directory, by kind.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

# Variables that would put a shim into a command by accident: every command
# starts from the caller's environment without them, then adds its own.
INJECTION_VARS = ("LD_AUDIT", "LD_PRELOAD", "LD_DEBUG", "LD_DEBUG_OUTPUT")


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in INJECTION_VARS and not k.startswith("CUDNN_TRACE")
    }
    env.update(extra or {})
    return env


@dataclass
class Cmd:
    """One command of a comparison. `{tmp}` in argv or env values becomes a
    fresh empty directory for each run (a trace directory), removed after it,
    or with `keep_tmp` once every round has run.

    `keep_tmp` is for start-up figures. Removing a run's files right before
    the next run is the harness's doing, not a user's, and on ext4 without a
    journal (this machine's) it makes every file the next run creates scan
    past the inodes just freed (`recently_deleted`, for 60 s after each
    removal): 0.1 to 0.3 ms a file (docs/benchmarks.md, session 11)."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    stdout: str = "capture"  # "capture" (parse key=value lines) or "null"
    rss: bool = False  # measure peak RSS through RUNRSS (see bench/c/runrss.c)
    keep_tmp: bool = False
    # stdin, stdout and stderr on a terminal of its own, the controlling
    # terminal of its session, as in a user's shell (run_in_terminal)
    terminal: bool = False


# bench/c/runrss, set by the suite. A process started from Python carries
# Python's own peak RSS across exec, so wait4's figure is only right for
# programs much bigger than the harness; runrss forks the program from a
# small process instead.
RUNRSS: str | None = None


@dataclass
class Sample:
    wall_s: float
    user_s: float
    sys_s: float
    maxrss_kb: int
    rc: int
    values: dict[str, float]
    timed_out: bool = False
    stderr_tail: str = ""
    # page faults that needed no I/O (wait4's ru_minflt): what the process
    # touched for the first time, a count the machine's load does not move
    minflt: int = 0

    @property
    def cpu_s(self) -> float:
        """User plus system time: the command's work, without the machine's
        stalls that wall time carries."""
        return self.user_s + self.sys_s


KV = re.compile(r"^([a-z_]+)=(-?[0-9.]+)$")


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_once(cmd: Cmd, timeout: float | None = None, kept: list[str] | None = None) -> Sample:
    """Runs `cmd` once; wall time around spawn and wait, CPU time and peak RSS
    from wait4 (the command and every descendant it waited for). With
    `cmd.keep_tmp` and a `kept` list, its `{tmp}` goes into `kept` to be
    removed later, not now."""
    if cmd.terminal:
        return run_in_terminal(cmd, kept)
    tmp, argv, env = with_tmp(cmd.argv, cmd.env)
    rss_file = None
    if cmd.rss:
        if not RUNRSS:
            raise RuntimeError("benchlib.RUNRSS is not set")
        rss_file = tempfile.NamedTemporaryFile(prefix="cdt-rss-")
        argv = [RUNRSS, rss_file.name, *argv]
    out = tempfile.TemporaryFile() if cmd.stdout == "capture" else subprocess.DEVNULL
    err = tempfile.TemporaryFile()
    try:
        t0 = time.perf_counter()
        p = subprocess.Popen(
            argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
            start_new_session=True,
        )
        rc, ru, hwm_at_timeout = _wait(p, timeout)
        timed_out = hwm_at_timeout is not None
        wall = time.perf_counter() - t0
        values = _read_values(out) if cmd.stdout == "capture" else {}
        err.seek(0)
        tail = err.read()[-2000:].decode(errors="replace")
        maxrss = ru.ru_maxrss
        if timed_out:
            maxrss = hwm_at_timeout  # the peak so far: a lower bound
        elif rss_file:
            maxrss = int(_read_values(rss_file)["maxrss_kb"])
    finally:
        drop_tmp(tmp, cmd.keep_tmp, kept)
        if rss_file:
            rss_file.close()
    return Sample(wall, ru.ru_utime, ru.ru_stime, maxrss, rc, values, timed_out, tail,
                  ru.ru_minflt)


def run_in_terminal(cmd: Cmd, kept: list[str] | None = None) -> Sample:
    """Runs `cmd` once as a user's shell runs it in a terminal: in a session
    of its own whose controlling terminal is a new pty (setsid, then the
    slave opened as fds 0, 1 and 2 by the session leader), in the pty's
    foreground, its output read from the master and dropped. cudnn-trace
    then takes its terminal path (a pty of its own, a session leader, the
    relay), which a regular file or /dev/null does not show. posix_spawn
    makes the session and opens the terminal without a Python hook between
    fork and exec; no timeout, no RSS."""
    tmp, argv, env = with_tmp(cmd.argv, cmd.env)
    master, slave = os.openpty()
    path = os.ttyname(slave)
    os.close(slave)
    drained = threading.Thread(target=_drain, args=(master,), daemon=True)
    drained.start()
    try:
        actions = [(os.POSIX_SPAWN_OPEN, fd, path, os.O_RDWR, 0) for fd in (0, 1, 2)]
        t0 = time.perf_counter()
        pid = os.posix_spawnp(argv[0], argv, env, file_actions=actions, setsid=True)
        _, status, ru = os.wait4(pid, 0)
        wall = time.perf_counter() - t0
        drained.join(timeout=5)
    finally:
        os.close(master)
        drop_tmp(tmp, cmd.keep_tmp, kept)
    return Sample(wall, ru.ru_utime, ru.ru_stime, ru.ru_maxrss, os.waitstatus_to_exitcode(status),
                  {}, False, "", ru.ru_minflt)


def _drain(master: int) -> None:
    """Reads a pty's master until no slave is left open (EIO)."""
    while True:
        try:
            if not os.read(master, 65536):
                return
        except OSError:
            return


def with_tmp(argv: list[str], env: dict[str, str]) -> tuple[str | None, list[str], dict[str, str]]:
    """A fresh directory for `{tmp}` where `argv` or `env` holds it (else
    None), and both with it put in; the environment the command gets
    (clean_env)."""
    wants = any("{tmp}" in a for a in argv) or any("{tmp}" in v for v in env.values())
    tmp = tempfile.mkdtemp(prefix="cdt-bench-") if wants else None
    sub = lambda s: s.replace("{tmp}", tmp) if tmp else s  # noqa: E731
    return tmp, [sub(a) for a in argv], clean_env({k: sub(v) for k, v in env.items()})


def drop_tmp(tmp: str | None, keep: bool = False, kept: list[str] | None = None) -> None:
    """Removes a run's `{tmp}` now, or with `keep` and a `kept` list puts it
    there to be removed after the last round (Cmd.keep_tmp says why)."""
    if tmp and keep and kept is not None:
        kept.append(tmp)
    elif tmp:
        shutil.rmtree(tmp, ignore_errors=True)


def _wait(p: subprocess.Popen, timeout: float | None):
    """wait4 with a deadline: past it, the peak RSS of the process tree so far
    is read (kB) and the whole process group is killed."""
    deadline = None if timeout is None else time.monotonic() + timeout
    hwm = None
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG if deadline else 0)
        if pid:
            break
        if time.monotonic() > deadline:
            hwm = peak_rss_of_tree(p.pid)
            _kill_group(p.pid)
            deadline = None  # now a blocking wait for the killed process
            continue
        time.sleep(0.002)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru, hwm


def peak_rss_of_tree(root: int) -> int:
    """The largest VmHWM (peak RSS, kB) among `root` and its descendants."""
    parent = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                # The command name may hold spaces or ')': ppid follows the last ')'.
                parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    tree, grew = {root}, True
    while grew:
        new = {pid for pid, pp in parent.items() if pp in tree} - tree
        tree |= new
        grew = bool(new)
    peak = 0
    for pid in tree:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
    return peak


def _read_values(f) -> dict[str, float]:
    f.seek(0)
    values = {}
    for line in f.read().decode(errors="replace").splitlines():
        m = KV.match(line.strip())
        if m:
            values[m.group(1)] = float(m.group(2))
    return values


def split_commands(argv: list[str]) -> list[list[str]]:
    """`OPTIONS :: NAME CMD... :: NAME CMD...` as [OPTIONS, [NAME, CMD...], ...]
    (the command lines of compare.py and count.py)."""
    chunks: list[list[str]] = [[]]
    for a in argv:
        if a == "::":
            chunks.append([])
        else:
            chunks[-1].append(a)
    return chunks


def split_env(words: list[str]) -> tuple[dict[str, str], list[str]]:
    """`[VAR=VALUE...] CMD ARGS` as (the assignments, CMD ARGS): the leading
    words that look like shell assignments are the command's environment, so
    that no `env(1)` exec counts as the command's own cost."""
    env: dict[str, str] = {}
    i = 0
    while i < len(words) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[i], re.S):
        var, _, value = words[i].partition("=")
        env[var] = value
        i += 1
    return env, words[i:]


def interleave(cmds: list[Cmd], runs: int, warmup: int = 1, timeout: float | None = None,
               log=None) -> dict[str, list[Sample]]:
    """`warmup` + `runs` rounds; round r runs the commands starting at index
    r mod len(cmds). Warm-up rounds are discarded. A failing run stops the
    suite (a benchmark of a broken command measures nothing)."""
    samples: dict[str, list[Sample]] = {c.name: [] for c in cmds}
    kept: list[str] = []
    try:
        for r in range(warmup + runs):
            k = r % len(cmds)
            for cmd in cmds[k:] + cmds[:k]:
                s = run_once(cmd, timeout, kept)
                if s.rc != 0 and not s.timed_out:
                    raise RuntimeError(
                        f"{cmd.name}: {' '.join(cmd.argv)} exited {s.rc}\n{s.stderr_tail}")
                if r >= warmup:
                    samples[cmd.name].append(s)
            if log:
                log(f"    round {r + 1}/{warmup + runs}")
    finally:
        for t in kept:
            shutil.rmtree(t, ignore_errors=True)
    return samples


def stats(values: list[float]) -> dict[str, float]:
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def wall_stats(samples: list[Sample]) -> dict[str, float]:
    return stats([s.wall_s for s in samples])


def value_stats(samples: list[Sample], key: str) -> dict[str, float]:
    return stats([s.values[key] for s in samples])


# ---------------------------------------------------------------------------
# Counting


def env_flags(tool_flag: str, env: dict[str, str]) -> list[str]:
    """`-E K=V` pairs (strace): the variables reach the traced program only,
    not strace itself (a shim in strace's own process would add a trace
    file, and its own start-up, to what is measured)."""
    out = []
    for k, v in env.items():
        out += [tool_flag, f"{k}={v}"]
    return out


def run_quiet(cmd: list[str]) -> None:
    """Runs a counting command; its output (a launcher's summary) is only
    shown when it fails."""
    p = subprocess.run(cmd, env=clean_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}:\n"
                           f"{p.stderr[-2000:].decode(errors='replace')}")


def strace_counts(argv: list[str], env: dict[str, str], raw: Path | None = None) -> dict[str, int]:
    """System calls by name for the whole process tree (`strace -f -c`)."""
    with tempfile.NamedTemporaryFile(suffix=".strace") as f:
        run_quiet(["strace", "-f", "-c", "-o", f.name, *env_flags("-E", env), *argv])
        text = Path(f.name).read_text()
    if raw:
        raw.write_text(text)
    return parse_strace_summary(text)


def parse_strace_summary(text: str) -> dict[str, int]:
    """The calls column of `strace -c`: `% time  seconds  usecs/call  calls
    [errors]  syscall` (errors is blank when there were none)."""
    counts = {}
    for line in text.splitlines():
        p = line.split()
        if len(p) >= 5 and p[0][0].isdigit() and p[-1] != "total":
            counts[p[-1]] = int(p[3])
    return counts


STRACE_CALL = re.compile(r"^(?:\d+ +)?([a-z_0-9]+)\(")
SHIM_FRAME = re.compile(r"libcdtrace\.so\(([^)]*?)(?:\+0x[0-9a-f]+)?\)")


def strace_sites(argv: list[str], env: dict[str, str], shim_name: str = "libcdtrace.so",
                 raw: Path | None = None) -> dict[str, int]:
    """System calls made from the shim, by name and by the innermost shim
    function on the stack (`strace -k`). The release build inlines a lot
    (ForkSafeLock::with shows as its caller), so a site is a function of
    shim/src with its inlined callees."""
    with tempfile.NamedTemporaryFile(suffix=".strace") as f:
        run_quiet(["strace", "-f", "-k", "-qq", "-o", f.name, *env_flags("-E", env), *argv])
        text = Path(f.name).read_text(errors="replace")
    sites: dict[str, int] = {}
    call, frames = None, []

    def flush():
        shim = [m.group(1) for fr in frames if shim_name in fr for m in [SHIM_FRAME.search(fr)] if m]
        if call and shim:
            key = f"{call} <- {shim[0]}"
            sites[key] = sites.get(key, 0) + 1

    for line in text.splitlines():
        m = STRACE_CALL.match(line)
        if m:
            flush()
            call, frames = m.group(1), []
        elif line.startswith(" > "):
            frames.append(line)
    flush()
    if raw:
        raw.write_text("".join(f"{n}\t{k}\n" for k, n in sorted(sites.items(), key=lambda x: -x[1])))
    return sites


COLLECTED = re.compile(r"Collected : (\d+)")


def callgrind_instructions(argv: list[str], env: dict[str, str], children: bool = False,
                           out_file: Path | None = None, stderr_file: Path | None = None) -> int:
    """Instructions executed by the program (callgrind's Ir); with
    `children`, summed over every process it starts. The variables go to
    valgrind's environment: the tool itself is static, and the program it runs
    inherits them (valgrind's small dynamic front end also loads a shim, which
    only adds a header-only trace file). `out_file` keeps the profile.
    Valgrind's messages go to a log file, not to stderr: a child's stderr is
    the program's, and the launcher explains what a program writes there
    (with valgrind's lines in it, it compiled every message pattern).
    `stderr_file`: where the program's stderr goes (a regular file, which the
    launcher captures and reads back; /dev/null, which it leaves alone, when
    not given)."""
    with tempfile.TemporaryDirectory() as logs:
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file or '/dev/null'}",
               f"--log-file={logs}/log.%p", f"--trace-children={'yes' if children else 'no'}",
               *argv]
        with open(stderr_file or os.devnull, "wb") as err:
            subprocess.run(cmd, env=clean_env(env), stdout=subprocess.DEVNULL, stderr=err,
                           check=True)
        text = "".join(sorted(f.read_text(errors="replace") for f in Path(logs).iterdir()))
    totals = [int(x) for x in COLLECTED.findall(text)]
    if not totals:
        raise RuntimeError(f"no callgrind total in:\n{text[-2000:]}")
    return sum(totals) if children else totals[0]


def cachegrind_counts(argv: list[str], env: dict[str, str]) -> dict[str, int]:
    """Instructions and first-level cache misses of the program (cachegrind's
    simulation: Ir, I1mr, D1mr, D1mw): what explains a wall time that grows
    more than the instructions do."""
    with tempfile.TemporaryDirectory() as t:
        out = Path(t) / "cg.out"
        cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=yes",
               f"--cachegrind-out-file={out}", f"--log-file={t}/log", *argv]
        subprocess.run(cmd, env=clean_env(env), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        events: list[str] = []
        for line in out.read_text().splitlines():
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("summary:"):
                return dict(zip(events, (int(x) for x in line.split()[1:])))
    raise RuntimeError(f"no cachegrind summary for {argv}")


def trace_events(trace_dir: Path) -> dict[str, int]:
    """Events by kind in every trace file of a directory (headers excluded)."""
    kinds: dict[str, int] = {}
    for f in Path(trace_dir).glob("*.jsonl"):
        for line in f.read_text(errors="replace").splitlines():
            try:
                ev = json.loads(line).get("ev")
            except ValueError:
                continue
            if ev != "process":
                kinds[ev] = kinds.get(ev, 0) + 1
    return kinds


def delta_per(a1: dict[str, int], a2: dict[str, int], b1: dict[str, int], b2: dict[str, int],
              units: float) -> dict[str, float]:
    """Per-name marginal cost: (traced growth - bare growth) / units, for
    counts taken at two sizes. Start-up and exit cancel out."""
    names = set(a1) | set(a2) | set(b1) | set(b2)
    out = {}
    for n in names:
        d = (a2.get(n, 0) - a1.get(n, 0)) - (b2.get(n, 0) - b1.get(n, 0))
        if abs(d) / units >= 0.005:
            out[n] = round(d / units, 3)
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))
