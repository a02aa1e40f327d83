#!/usr/bin/env python3
"""Counts what whole commands execute, through the kernel's performance
counters (perf_event_open(2), no perf binary needed), in interleaved rounds:

  count.py [--runs N] [--event instructions|task-clock] [--json FILE] :: NAME [VAR=VALUE...] CMD [ARGS...] :: ...

The counter follows the command and every process and thread it starts
(`inherit`), counts user space only (`exclude_kernel`, which an unprivileged
user may ask for at perf_event_paranoid 2), and starts at the command's exec
(`enable_on_exec`). `instructions` is the hardware counter; `task-clock`
(CPU nanoseconds, software) works where the hardware one is not exposed.
`{tmp}` in a command becomes a fresh directory per run. Words of the form
VAR=VALUE before CMD go into its environment, as in compare.py. Prints median, min
and max per command and the ratio of medians to the first.

Where wall or CPU time varies by more than the difference sought (a GPU
program's start-up varies by ±1 s on 6 s), instructions retired in user space
vary far less: the shim's own work shows up in them, the kernel's and the
device's waiting do not (bench/gpu.sh).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402

SYS_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}
EVENTS = {
    # (type, config): PERF_TYPE_HARDWARE/PERF_COUNT_HW_INSTRUCTIONS,
    # PERF_TYPE_SOFTWARE/PERF_COUNT_SW_TASK_CLOCK.
    "instructions": (0, 1),
    "task-clock": (1, 1),
}
# perf_event_attr flag bits (linux/perf_event.h).
DISABLED, INHERIT, EXCLUDE_KERNEL, EXCLUDE_HV, ENABLE_ON_EXEC = 1 << 0, 1 << 1, 1 << 5, 1 << 6, 1 << 12
PERF_FLAG_FD_CLOEXEC = 1 << 3


def attr(event: str) -> bytes:
    """A PERF_ATTR_SIZE_VER0 (64-byte) perf_event_attr."""
    typ, config = EVENTS[event]
    flags = DISABLED | INHERIT | EXCLUDE_KERNEL | EXCLUDE_HV | ENABLE_ON_EXEC
    return struct.pack("<IIQQQQQIIQ", typ, 64, config, 0, 0, 0, flags, 0, 0, 0)


def open_counter(event: str, pid: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    nr = SYS_PERF_EVENT_OPEN[os.uname().machine]
    buf = ctypes.create_string_buffer(attr(event), 64)
    fd = libc.syscall(nr, buf, pid, -1, -1, PERF_FLAG_FD_CLOEXEC)
    if fd < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"perf_event_open({event}): {os.strerror(e)}")
    return fd


def count_once(event: str, words: list[str]) -> int:
    """Runs `[VAR=VALUE...] CMD ARGS` (stdout and stderr to /dev/null; the
    assignments added to the environment, as compare.py does) and returns
    its count."""
    assigned, words = bl.split_env(words)
    tmp, argv, env = bl.with_tmp(words, assigned)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child waits until its counter exists, then execs
        try:
            os.close(w)
            os.read(r, 1)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)
    os.close(r)
    try:
        fd = open_counter(event, pid)
    except OSError:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        raise
    finally:
        os.close(w)  # releases the child either way
    _, status = os.waitpid(pid, 0)
    value = struct.unpack("<Q", os.read(fd, 8))[0]
    os.close(fd)
    bl.drop_tmp(tmp)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {os.waitstatus_to_exitcode(status)}")
    return value


def main() -> None:
    chunks = bl.split_commands(sys.argv[1:])
    ap = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1].strip())
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--event", choices=sorted(EVENTS), default="instructions")
    ap.add_argument("--json", type=Path)
    opts = ap.parse_args(chunks[0])
    cmds = [(c[0], c[1:]) for c in chunks[1:] if len(c) > 1]
    if len(cmds) < 2:
        ap.error("give at least two ':: NAME CMD' commands")
    values: dict[str, list[int]] = {n: [] for n, _ in cmds}
    for r in range(opts.warmup + opts.runs):
        k = r % len(cmds)
        for name, argv in cmds[k:] + cmds[:k]:
            v = count_once(opts.event, argv)
            if r >= opts.warmup:
                values[name].append(v)
    med = {n: statistics.median(v) for n, v in values.items()}
    base = med[cmds[0][0]]
    print(f"{'command':<12} {'median':>16} {'min':>16} {'max':>16} {'ratio':>7}   "
          f"({opts.event}, user space, n={opts.runs})")
    for n, v in values.items():
        print(f"{n:<12} {med[n]:>16,.0f} {min(v):>16,} {max(v):>16,} {med[n] / base:>7.4f}")
    if opts.json:
        opts.json.write_text(json.dumps({"event": opts.event, "runs": opts.runs, "values": values,
                                         "argv": {n: a for n, a in cmds}}, indent=1) + "\n")


if __name__ == "__main__":
    main()
