#!/usr/bin/env python3
"""The measurements of bench/run.sh (see docs/benchmarks.md for what each
section means). Run through run.sh, which installs the tools and builds the
programs first; this file only measures and writes RESULTS/*.json plus small
raw files under RESULTS/raw/.

Counting comes first: system calls (strace) and instructions (callgrind) do
not depend on what else the machine is doing. Times are taken in interleaved
rounds and quoted as median, min and max; per-operation times come from the
program's own clock around its loop (`loop_ns=`), so that process start-up
does not dilute them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402

# Sizes and repetitions per mode. `quick` is a smoke run of a few minutes;
# `default` is the figure of record (about 20 minutes on the 2-core machine);
# `full` adds the gigabyte report cases of issue 10.
PARAMS = {
    "quick": dict(
        count_n=(50, 250), sites_n=(10, 40), cg_n=(50, 250), time_n=1000, runs=5,
        heavy=(1000, 20_000), heavy_runs=3, cg_heavy=(1000, 20_000), cg_reopen=(1000, 5_000),
        ltrace_libs=(10, 25, 50), ltrace_reopen=(25, 2000), ltrace_reps=1,
        start_runs=11, mem_runs=3, call_n=2_000_000, call_runs=5, cg_call=(100_000, 300_000),
        report_single=(2, 4), report_many=((100, 8), (200, 16)), report_cycles=(2_000, 4_000),
        report_runs=2, report_pair_runs=3, report_timeout=300, fleet_ranks=(100, 200),
        fleet_runs=2, progress_runs=1,
    ),
    "default": dict(
        count_n=(100, 1100), sites_n=(10, 60), cg_n=(100, 600), time_n=2000, runs=11,
        heavy=(1000, 100_000), heavy_runs=7, cg_heavy=(1000, 100_000), cg_reopen=(1000, 20_000),
        ltrace_libs=(50, 100, 150), ltrace_reopen=(100, 10_000), ltrace_reps=2,
        start_runs=101, mem_runs=5, call_n=10_000_000, call_runs=11,
        cg_call=(100_000, 1_100_000),
        report_single=(2, 8, 16, 32), report_many=((1000, 64), (2000, 128)),
        report_cycles=(10_000, 20_000, 40_000), report_runs=5, report_pair_runs=7,
        report_timeout=600,
        fleet_ranks=(250, 500, 1000), fleet_runs=3, progress_runs=3,
    ),
}
PARAMS["full"] = dict(
    PARAMS["default"],
    report_single=(2, 8, 16, 32, 256, 512, 1024), report_many=((1000, 64), (2000, 128),
                                                              (5000, 512), (10_000, 1024)),
    report_cycles=(10_000, 20_000, 40_000, 500_000, 1_000_000), report_pair_runs=11,
    report_timeout=900,
)
# A report case slower than this (seconds) is run once.
SLOW_S = 5.0


@dataclass
class Ctx:
    mode: str
    p: dict
    root: Path
    bin: Path       # the benchmark programs
    lib: Path       # benchlib.so under CUDA-family and plain names
    cli: Path
    shim_env: dict  # what the launcher puts in a program's environment
    python: str     # the real interpreter (not a pyenv shim script)
    out: Path
    work: Path      # scratch space (traces for report)
    # --baseline: another build's environment, run in the same rounds (section 3)
    baseline_env: dict | None = None
    # --baseline-cli: another build of the launcher, run in the same rounds (section 4)
    baseline_cli: Path | None = None

    def raw(self, section: str) -> Path:
        d = self.out / "raw" / section
        d.mkdir(parents=True, exist_ok=True)
        return d

    def traced(self, trace_dir: str | Path) -> dict:
        return dict(self.shim_env, CUDNN_TRACE_DIR=str(trace_dir))


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def loadavg() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def paired(a: list[bl.Sample], b: list[bl.Sample], key: str, scale: float) -> dict:
    """Round-by-round difference b - a of a program-reported value, scaled
    (interleaving makes rounds comparable: both ran within seconds)."""
    return bl.stats([(y.values[key] - x.values[key]) * scale for x, y in zip(a, b)])


# ---------------------------------------------------------------------------
# 1 and 2: what one dlopen/dlclose cycle costs, recorded or not


def cycle_costs(ctx: Ctx, section: str, lib: Path) -> dict:
    """System calls, instructions and time per dlopen/dlclose cycle of `lib`
    and per event written, bare against traced, each as the growth between
    two loop sizes (start-up and exit cancel out)."""
    prog = str(ctx.bin / "dlloop")
    res: dict = {"library": lib.name}
    per_cycle, ev_per_cycle, kinds = cycle_syscalls(ctx, ctx.raw(section), prog, lib)
    res["events_per_cycle"] = ev_per_cycle
    res["event_kinds"] = kinds
    res["syscalls_per_cycle"] = per_cycle
    res["syscalls_per_cycle_total"] = round(sum(per_cycle.values()), 3)
    if ev_per_cycle:
        res["syscalls_per_event"] = {k: round(v / ev_per_cycle, 3) for k, v in per_cycle.items()}
        res["syscalls_per_event_total"] = round(sum(per_cycle.values()) / ev_per_cycle, 3)
    res["syscall_sites_per_cycle"] = shim_sites(ctx, ctx.raw(section), prog, lib)
    res["instructions"] = instructions(ctx, section, prog, lib, ev_per_cycle)
    res["time"] = cycle_time(ctx, prog, lib, ev_per_cycle)
    return res


def cycle_syscalls(ctx: Ctx, raw: Path, prog: str, lib: Path) -> tuple[dict, float, dict]:
    """System calls the shim adds per cycle, by name; events per cycle; the
    events of the larger run by kind."""
    n1, n2 = ctx.p["count_n"]
    counts, events = {}, {}
    for n in (n1, n2):
        argv = [prog, str(lib), str(n)]
        counts["bare", n] = bl.strace_counts(argv, {}, raw / f"strace-bare-{n}.txt")
        with tempfile.TemporaryDirectory() as t:
            counts["traced", n] = bl.strace_counts(argv, ctx.traced(t),
                                                   raw / f"strace-traced-{n}.txt")
            events[n] = bl.trace_events(Path(t))
    ev_per_cycle = (sum(events[n2].values()) - sum(events[n1].values())) / (n2 - n1)
    per_cycle = bl.delta_per(counts["traced", n1], counts["traced", n2], counts["bare", n1],
                             counts["bare", n2], n2 - n1)
    return per_cycle, ev_per_cycle, events[n2]


def shim_sites(ctx: Ctx, raw: Path, prog: str, lib: Path) -> dict:
    """Where the shim's system calls come from, per cycle (strace -k)."""
    a, b = ctx.p["sites_n"]
    with tempfile.TemporaryDirectory() as t1, tempfile.TemporaryDirectory() as t2:
        s1 = bl.strace_sites([prog, str(lib), str(a)], ctx.traced(t1), raw=raw / f"sites-{a}.txt")
        s2 = bl.strace_sites([prog, str(lib), str(b)], ctx.traced(t2), raw=raw / f"sites-{b}.txt")
    return bl.delta_per(s1, s2, {}, {}, b - a)


def instructions(ctx: Ctx, section: str, prog: str, lib: Path, ev_per_cycle: float) -> dict:
    n1, n2 = ctx.p["cg_n"]
    ir = {}
    prof = ctx.raw(section) / "traced.callgrind"
    for n in (n1, n2):
        ir["bare", n] = bl.callgrind_instructions([prog, str(lib), str(n)], {})
        with tempfile.TemporaryDirectory() as t:
            ir["traced", n] = bl.callgrind_instructions([prog, str(lib), str(n)], ctx.traced(t),
                                                        out_file=prof if n == n2 else None)
    shim_profile(prof, ctx.raw(section) / "shim-profile.txt", n2)
    bare_cycle = (ir["bare", n2] - ir["bare", n1]) / (n2 - n1)
    traced_cycle = (ir["traced", n2] - ir["traced", n1]) / (n2 - n1)
    out = {
        "n": [n1, n2],
        "raw": {f"{k}-{n}": v for (k, n), v in ir.items()},
        "bare_per_cycle": round(bare_cycle),
        "traced_per_cycle": round(traced_cycle),
        "added_per_cycle": round(traced_cycle - bare_cycle),
        "ratio_per_cycle": round(traced_cycle / bare_cycle, 4),
        "ratio_whole_run": round(ir["traced", n2] / ir["bare", n2], 4),
    }
    if ev_per_cycle:
        out["added_per_event"] = round((traced_cycle - bare_cycle) / ev_per_cycle)
    return out


# "1,052,579 ( 9.87%)  ???:function [/path/object.so]" (callgrind_annotate)
ANNOTATE_ROW = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*?)\s+\[(.*)\]\s*$")


def shim_profile(prof: Path, dest: Path, cycles: int) -> None:
    """The shim's functions by their own instructions (callgrind, exclusive),
    per cycle, from the traced run: the profile the optimisation starts from.
    The callgrind file itself is large and not kept."""
    ann = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", str(prof)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    prof.unlink(missing_ok=True)
    rows = []
    for line in ann.splitlines():
        m = ANNOTATE_ROW.match(line)
        if m and "libcdtrace" in m.group(3):
            rows.append((int(m.group(1).replace(",", "")), m.group(2)))
    total = sum(n for n, _ in rows)
    lines = [f"# shim functions, own instructions per cycle over {cycles} cycles "
             f"(whole run, start-up included); shim total {total / cycles:,.0f} per cycle"]
    lines += [f"{n / cycles:12,.1f}  {fn}" for n, fn in rows[:40]]
    dest.write_text("\n".join(lines) + "\n")


def cycle_time(ctx: Ctx, prog: str, lib: Path, ev_per_cycle: float) -> dict:
    n = ctx.p["time_n"]
    cmds = [bl.Cmd("bare", [prog, str(lib), str(n)]),
            bl.Cmd("traced", [prog, str(lib), str(n)], ctx.traced("{tmp}"))]
    s = bl.interleave(cmds, ctx.p["runs"], log=log)
    us = 1 / (1000 * n)  # loop_ns of the whole loop -> microseconds per cycle
    out = {
        "n": n,
        "bare_us_per_cycle": bl.stats([x.values["loop_ns"] * us for x in s["bare"]]),
        "traced_us_per_cycle": bl.stats([x.values["loop_ns"] * us for x in s["traced"]]),
        "added_us_per_cycle": paired(s["bare"], s["traced"], "loop_ns", us),
    }
    if ev_per_cycle:
        out["added_us_per_event"] = paired(s["bare"], s["traced"], "loop_ns", us / ev_per_cycle)
    out["ratio_median"] = out["traced_us_per_cycle"]["median"] / out["bare_us_per_cycle"]["median"]
    return out


def section_events(ctx: Ctx) -> dict:
    return cycle_costs(ctx, "events", ctx.lib / "libcublas_bench.so")


def section_idle(ctx: Ctx) -> dict:
    return cycle_costs(ctx, "idle", ctx.lib / "libplain_bench.so")


# ---------------------------------------------------------------------------
# 3: the dlopen-heavy program


def heavy_libs(ctx: Ctx, n: int) -> Path:
    """n distinct CUDA-named libraries: copies of one build whose SONAME
    placeholder XXXX becomes the index (same length, so the ELF stays valid).
    Each copy is its own file (own inode), so the loader maps each one."""
    d = ctx.work / f"heavy-{n}"
    if (d / f"libcublas_bench_{n - 1:04d}.so").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    tpl = (ctx.lib / "libcublas_bench_XXXX.so").read_bytes()
    assert tpl.count(b"XXXX") == 1, "SONAME placeholder must appear once"
    for i in range(n):
        (d / f"libcublas_bench_{i:04d}.so").write_bytes(tpl.replace(b"XXXX", b"%04d" % i))
    return d


def section_heavy(ctx: Ctx) -> dict:
    nlibs, nre = ctx.p["heavy"]
    libs = heavy_libs(ctx, nlibs)
    prog = [str(ctx.bin / "dlheavy"), str(libs), str(nlibs), str(nre)]
    cmds = [
        bl.Cmd("bare", prog),
        bl.Cmd("traced", prog, ctx.traced("{tmp}")),
        # LD_DEBUG writes to a file, as the trace does (not to a terminal).
        bl.Cmd("ld_debug", prog, {"LD_DEBUG": "libs,files", "LD_DEBUG_OUTPUT": "{tmp}/ld"}),
        bl.Cmd("strace_openat", ["strace", "-f", "-e", "trace=openat", "-o", "{tmp}/s", *prog]),
    ]
    if ctx.baseline_env is not None:
        cmds.append(bl.Cmd("baseline", prog, dict(ctx.baseline_env, CUDNN_TRACE_DIR="{tmp}")))
    s = bl.interleave(cmds, ctx.p["heavy_runs"], log=log)
    res: dict = {"nlibs": nlibs, "nreopen": nre, "wall_s": {}, "loop_s": {}}
    for c in cmds:
        res["wall_s"][c.name] = bl.wall_stats(s[c.name])
        res["loop_s"][c.name] = bl.stats([x.values["loop_ns"] / 1e9 for x in s[c.name]])
    med = {k: v["median"] for k, v in res["wall_s"].items()}
    res["ratios_wall"] = {
        "traced/bare": med["traced"] / med["bare"],
        "ld_debug/bare": med["ld_debug"] / med["bare"],
        "strace_openat/bare": med["strace_openat"] / med["bare"],
        "ld_debug/traced": med["ld_debug"] / med["traced"],
        "strace_openat/traced": med["strace_openat"] / med["traced"],
        # Each round runs every command once: a round's ratio cancels what
        # drifts between rounds (the machine's speed moves here).
        "traced/bare paired": statistics.median(
            t.wall_s / b.wall_s for t, b in zip(s["traced"], s["bare"])),
    }
    if "baseline" in s:
        # Before/after in the same rounds: on this machine two runs of one
        # build, minutes apart, differ by more than the builds do.
        res["ratios_wall"]["baseline/bare"] = med["baseline"] / med["bare"]
        res["ratios_wall"]["baseline/bare paired"] = statistics.median(
            t.wall_s / b.wall_s for t, b in zip(s["baseline"], s["bare"]))
        res["baseline"] = str(ctx.baseline_env["LD_AUDIT"])
    with tempfile.TemporaryDirectory() as t:
        subprocess.run(prog, env=bl.clean_env(ctx.traced(t)), check=True, stdout=subprocess.DEVNULL)
        res["event_kinds"] = bl.trace_events(Path(t))
    res["instructions"] = heavy_instructions(ctx, libs)
    res["ltrace"] = heavy_ltrace(ctx, libs, med["bare"])
    return res


def heavy_instructions(ctx: Ctx, libs: Path) -> dict:
    nlibs, nre = ctx.p["cg_heavy"]
    prog = [str(ctx.bin / "dlheavy"), str(libs), str(nlibs), str(nre)]
    bare = bl.callgrind_instructions(prog, {})
    with tempfile.TemporaryDirectory() as t:
        traced = bl.callgrind_instructions(prog, ctx.traced(t))
    return {"nlibs": nlibs, "nreopen": nre, "bare": bare, "traced": traced,
            "ratio": traced / bare, "per_reopen": heavy_per_reopen(ctx, libs)}


def heavy_per_reopen(ctx: Ctx, libs: Path) -> dict:
    """What the shim adds to one re-open, in instructions and L1 misses
    (cachegrind, N re-opens minus none, traced minus bare). Each bare re-open
    compares the name with every object loaded, and that walk evicts the
    caches: every line the shim then touches comes from far away, which is
    why its wall time ratio exceeds its instruction ratio."""
    nlibs, nre = ctx.p["cg_reopen"]
    counts = {}
    for name in ("bare", "traced"):
        for n in (0, nre):
            prog = [str(ctx.bin / "dlheavy"), str(libs), str(nlibs), str(n)]
            with tempfile.TemporaryDirectory() as t:
                env = ctx.traced(t) if name == "traced" else {}
                counts[(name, n)] = bl.cachegrind_counts(prog, env)

    def per(name: str, ev: str) -> float:
        return (counts[(name, nre)][ev] - counts[(name, 0)][ev]) / nre

    out: dict = {"nlibs": nlibs, "nreopen": nre}
    for ev in ("Ir", "I1mr", "D1mr", "D1mw"):
        out[ev] = {"bare": per("bare", ev), "added": per("traced", ev) - per("bare", ev)}
    return out


def heavy_ltrace(ctx: Ctx, libs: Path, bare_full_s: float) -> dict:
    """ltrace -f -e dlopen is far too slow for the full program (its time
    grows faster than linearly with the objects loaded: the first 1,000 opens
    alone take minutes), so it runs on fewer libraries and re-opens, and the
    full-size time is extrapolated: opens fitted as a + b n + c n^2 over three
    sizes, plus the measured cost per re-open times the re-opens. ltrace is
    ptrace-bound and suffers from load more than anything else here, so each
    point is the fastest of `ltrace_reps` runs."""
    nlibs, nre = ctx.p["heavy"]
    sizes = ctx.p["ltrace_libs"]
    re_n, re_cap = ctx.p["ltrace_reopen"]
    prog = str(ctx.bin / "dlheavy")

    def fastest(argv: list[str], reps: int) -> float:
        return min(bl.run_once(bl.Cmd("run", argv)).wall_s for _ in range(reps))

    def lt(nl: int, nr: int) -> float:
        return fastest(["ltrace", "-f", "-e", "dlopen", "-o", "/dev/null", prog, str(libs),
                        str(nl), str(nr)], ctx.p["ltrace_reps"])

    opens = {n: lt(n, 0) for n in sizes}
    with_re = lt(re_n, re_cap)
    per_reopen = max(0.0, (with_re - opens[re_n]) / re_cap)
    a, b, c = fit_quadratic([(n, opens[n]) for n in sizes])
    est = a + b * nlibs + c * nlibs * nlibs + per_reopen * nre
    small_bare = fastest([prog, str(libs), str(re_n), str(re_cap)], 3)
    return {
        "opens_s": {str(n): v for n, v in opens.items()},
        "reopen_run": {"nlibs": re_n, "nreopen": re_cap, "s": with_re, "bare_s": small_bare},
        "per_reopen_ms": per_reopen * 1000,
        "small_ratio": with_re / small_bare,
        "extrapolated_full_s": est,
        "extrapolated_ratio": est / bare_full_s,
    }


def fit_quadratic(pts: list[tuple[float, float]]) -> tuple[float, float, float]:
    """The parabola through three points (Lagrange form, expanded)."""
    (x0, y0), (x1, y1), (x2, y2) = pts
    l0 = y0 / ((x0 - x1) * (x0 - x2))
    l1 = y1 / ((x1 - x0) * (x1 - x2))
    l2 = y2 / ((x2 - x0) * (x2 - x1))
    c = l0 + l1 + l2
    b = -(l0 * (x1 + x2) + l1 * (x0 + x2) + l2 * (x0 + x1))
    a = l0 * x1 * x2 + l1 * x0 * x2 + l2 * x0 * x1
    return a, b, c


# ---------------------------------------------------------------------------
# 4: start-up


def from_disk(binary: Path, argv: tuple[str, ...] = ("--version",)) -> None:
    """Drops `binary`'s pages from the page cache, then runs it once, so that
    they come back as from a disk read (readahead). The same binary starts
    0.3 to 0.4 ms faster or slower depending on how its pages entered the
    cache (the linker's small writes or a copy leave other folio sizes than
    a read does; docs/benchmarks.md, session 8): without this, comparing a
    just-linked launcher with another build measures that, not the code."""
    fd = os.open(binary, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    subprocess.run([str(binary), *argv], stdout=subprocess.DEVNULL, check=False)


def section_startup(ctx: Ctx) -> dict:
    for b in (ctx.cli, ctx.baseline_cli):
        if b is not None:
            from_disk(b)
    floor = ctx.bin / "spawn_floor"
    from_disk(floor, ("/bin/true",))
    launcher = [str(ctx.cli), "--out", "{tmp}/trace", "--"]
    progs = {"true": ["/bin/true"], "python": [ctx.python, "-c", "pass"]}
    cmds = []
    hows = ["shim", "floor", "launcher"]
    if ctx.baseline_cli is not None:
        hows.append("baseline")
    # Trace directories stay until the last round (bl.Cmd.keep_tmp says why).
    for name, argv in progs.items():
        cmds += [bl.Cmd(f"{name}_bare", argv),
                 bl.Cmd(f"{name}_shim", argv, ctx.traced("{tmp}"), keep_tmp=True),
                 # The least any launcher process costs: spawn and wait, with
                 # the shim's environment (bench/c/spawn_floor.c).
                 bl.Cmd(f"{name}_floor", [str(floor), *argv], ctx.traced("{tmp}"),
                        keep_tmp=True),
                 bl.Cmd(f"{name}_launcher", launcher + argv, keep_tmp=True)]
        if ctx.baseline_cli is not None:
            cmds.append(bl.Cmd(f"{name}_baseline",
                               [str(ctx.baseline_cli), *launcher[1:], *argv], keep_tmp=True))
    # /bin/true as from a user's shell in a terminal, where the launcher
    # runs the program on a pty of its own under a session leader
    # (core/src/launch/session.rs): the other rows give it /dev/null and a
    # file, as hyperfine and scripts do.
    cmds += [bl.Cmd("true_bare_tty", progs["true"], terminal=True),
             bl.Cmd("true_launcher_tty", launcher + progs["true"], keep_tmp=True, terminal=True)]
    s = bl.interleave(cmds, ctx.p["start_runs"], log=log)
    res: dict = {"python": ctx.python, "wall_ms": {}}
    if ctx.baseline_cli is not None:
        res["baseline_cli"] = str(ctx.baseline_cli)
    for c in cmds:
        res["wall_ms"][c.name] = bl.stats([x.wall_s * 1000 for x in s[c.name]])
    for name in progs:
        bare = res["wall_ms"][f"{name}_bare"]["median"]
        for how in hows:
            m = res["wall_ms"][f"{name}_{how}"]["median"]
            res[f"{name}_{how}_added_ms"] = m - bare
            res[f"{name}_{how}_added_pct"] = 100 * (m - bare) / bare
    res["true_tty_added_ms"] = (res["wall_ms"]["true_launcher_tty"]["median"]
                                - res["wall_ms"]["true_bare_tty"]["median"])
    res["true_counts"] = startup_counts(ctx)
    return res


def startup_counts(ctx: Ctx) -> dict:
    """Instructions (every process) and system calls of /bin/true bare, with
    the shim, and under the launcher, plus the launcher's own profile (the
    top of callgrind's inclusive costs) for whoever optimises it."""
    raw = ctx.raw("startup")
    true = ["/bin/true"]
    out: dict = {"instructions": {}, "syscalls": {}}
    with tempfile.TemporaryDirectory() as t:
        launcher = [str(ctx.cli), "--out", f"{t}/trace", "--", *true]
        prof = raw / "launcher.callgrind"
        out["instructions"] = {
            "bare": bl.callgrind_instructions(true, {}),
            "shim": bl.callgrind_instructions(true, ctx.traced(t)),
            "launcher": bl.callgrind_instructions(launcher, {}, children=True),
            "launcher_process": bl.callgrind_instructions(launcher, {}, out_file=prof),
        }
    out["launcher_by_program"] = launcher_programs(ctx)
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", str(prof)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    (raw / "launcher-profile.txt").write_text("\n".join(ann.splitlines()[:60]) + "\n")
    prof.unlink(missing_ok=True)
    for name, env, argv in (("bare", {}, true), ("shim", None, true), ("launcher", {}, None)):
        with tempfile.TemporaryDirectory() as t:
            c = bl.strace_counts(argv or [str(ctx.cli), "--out", f"{t}/trace", "--", *true],
                                 ctx.traced(t) if env is None else env,
                                 raw / f"strace-true-{name}.txt")
        out["syscalls"][name] = sum(c.values())
    return out


# A few KB of ordinary stderr (a training loop's log lines, a library's
# warning): no message of the knowledge tables in it. Fixed, so that every run
# measures the same work.
ORDINARY_STDERR = "".join(
    f"2026-11-24 19:30:{i % 60:02d},123 INFO trainer.py:88] epoch {i // 10}/10 step {i * 100}: "
    f"loss={1 / (i + 1):.4f} lr=3e-4 (12.4 it/s)\n"
    + ("/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py:558: UserWarning: This "
       "DataLoader will create 4 worker processes in total.\n" if i % 10 == 0 else "")
    for i in range(48))


def launcher_programs(ctx: Ctx) -> dict:
    """Instructions of the launcher process alone (callgrind, the program not
    counted) for programs that make it do different work at the end of the
    run: nothing to read (`/bin/true`, `python3 -c pass`), a few KB of
    ordinary stderr captured to a file (message recognition), and a program
    that loads the fake cuDNN 9 (the knowledge tables are read)."""
    ctx.work.mkdir(parents=True, exist_ok=True)
    text = ctx.work / "ordinary-stderr.txt"
    text.write_text(ORDINARY_STDERR)
    progs = {
        "true": ["/bin/true"],
        "python": [ctx.python, "-c", "pass"],
        "stderr": ["/bin/sh", "-c", f"cat {text} >&2"],
        "cuda": [str(ctx.bin / "wrapcall"), "plt", "1"],
    }
    out: dict = {"stderr_bytes": len(ORDINARY_STDERR.encode())}
    for name, argv in progs.items():
        with tempfile.TemporaryDirectory() as t:
            out[name] = bl.callgrind_instructions(
                [str(ctx.cli), "--out", f"{t}/trace", "--", *argv], {},
                stderr_file=Path(t) / "stderr.log")
    return out


# ---------------------------------------------------------------------------
# 5: memory


def smaps(pid: int) -> dict:
    """Rss, Pss and private memory (kB) and the thread count of a process."""
    out = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        k, v = line.split(":", 1)
        out[k] = int(v.split()[0])
    threads = next(int(x.split()[1]) for x in Path(f"/proc/{pid}/status").read_text().splitlines()
                   if x.startswith("Threads:"))
    return {"rss_kb": out["Rss"], "pss_kb": out["Pss"],
            "private_kb": out["Private_Clean"] + out["Private_Dirty"], "threads": threads}


def probe_memory(argv: list[str], env: dict) -> dict:
    """Starts memprobe (directly or under the launcher), reads its memory at
    its pause point, then lets it exit by closing its stdin."""
    p = subprocess.Popen(argv, env=bl.clean_env(env), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        first = p.stdout.readline().split()
        if len(first) != 2 or first[0] != "ready":
            raise RuntimeError(f"memprobe said {first!r}")
        return smaps(int(first[1]))
    finally:
        p.stdin.close()
        p.wait(timeout=60)


def section_memory(ctx: Ctx) -> dict:
    prog = [str(ctx.bin / "memprobe")]
    variants = {
        "bare": (prog, {}),
        "shim": (prog, ctx.traced("{tmp}")),
        "launcher": ([str(ctx.cli), "--out", "{tmp}/trace", "--", *prog], {}),
    }
    res: dict = {}
    for name, (argv, env) in variants.items():
        rows = []
        for _ in range(ctx.p["mem_runs"]):
            with tempfile.TemporaryDirectory() as t:
                rows.append(probe_memory([a.replace("{tmp}", t) for a in argv],
                                         {k: v.replace("{tmp}", t) for k, v in env.items()}))
        res[name] = {k: bl.stats([r[k] for r in rows]) for k in rows[0]}
    for how in ("shim", "launcher"):
        res[f"{how}_added"] = {k: res[how][k]["median"] - res["bare"][k]["median"]
                               for k in res["bare"]}
    return res


# ---------------------------------------------------------------------------
# 6: a wrapped cuDNN call


def section_calls(ctx: Ctx) -> dict:
    prog = str(ctx.bin / "wrapcall")
    n = ctx.p["call_n"]
    res: dict = {"n": n}
    for how in ("plt", "dlsym"):
        cmds = [bl.Cmd("bare", [prog, how, str(n)]),
                bl.Cmd("traced", [prog, how, str(n)], ctx.traced("{tmp}"))]
        s = bl.interleave(cmds, ctx.p["call_runs"], log=log)
        res[how] = {
            "bare_ns": bl.value_stats(s["bare"], "ns_per_call"),
            "traced_ns": bl.value_stats(s["traced"], "ns_per_call"),
            "added_ns": paired(s["bare"], s["traced"], "ns_per_call", 1.0),
            "instructions": call_instructions(ctx, prog, how),
        }
    return res


def call_instructions(ctx: Ctx, prog: str, how: str) -> dict:
    n1, n2 = ctx.p["cg_call"]
    ir = {}
    for n in (n1, n2):
        ir["bare", n] = bl.callgrind_instructions([prog, how, str(n)], {})
        with tempfile.TemporaryDirectory() as t:
            ir["traced", n] = bl.callgrind_instructions([prog, how, str(n)], ctx.traced(t))
    bare = (ir["bare", n2] - ir["bare", n1]) / (n2 - n1)
    traced = (ir["traced", n2] - ir["traced", n1]) / (n2 - n1)
    return {"bare_per_call": bare, "traced_per_call": traced, "added_per_call": traced - bare}


# ---------------------------------------------------------------------------
# 7: report


GEN = Path(__file__).resolve().parent / "gen_trace.py"


def trace_case(ctx: Ctx, kind: str, args: list[str]) -> Path:
    """A generated trace directory, reused while the generator is unchanged."""
    tag = hashlib.sha256(GEN.read_bytes()).hexdigest()[:8]
    d = ctx.work / "traces" / f"{kind}-{'-'.join(args[1::2])}-{tag}"
    if not (d / ".done").exists():
        shutil.rmtree(d, ignore_errors=True)
        log(f"    generating {d.name}")
        subprocess.run([sys.executable, str(GEN), kind, str(d), *args], check=True)
        (d / ".done").touch()
    return d


def dir_mb(d: Path) -> float:
    return sum(f.stat().st_size for f in d.glob("*.jsonl")) / 2**20


def report_case(ctx: Ctx, name: str, d: Path) -> dict:
    """report and report --json on one trace directory. A first round tells
    how slow they are: past SLOW_S it is the only one (repeating a minute-long
    quadratic run adds time, not information), else it is the warm-up."""
    mb = dir_mb(d)
    cmds = [bl.Cmd("text", [str(ctx.cli), "report", str(d)], stdout="null", rss=True),
            bl.Cmd("json", [str(ctx.cli), "report", "--json", str(d)], stdout="null", rss=True)]
    timeout = ctx.p["report_timeout"]
    s = bl.interleave(cmds, 1, warmup=0, timeout=timeout, log=log)
    slow = any(x.wall_s > SLOW_S or x.timed_out for xs in s.values() for x in xs)
    if not slow:
        s = bl.interleave(cmds, ctx.p["report_runs"], warmup=0, timeout=timeout, log=log)
    res: dict = {"case": name, "mb": round(mb, 2), "files": len(list(d.glob("*.jsonl")))}
    for c in cmds:
        xs = s[c.name]
        res[c.name] = {
            "timed_out": any(x.timed_out for x in xs),
            "wall_s": bl.wall_stats(xs),
            # report is single-threaded: its CPU time is its work, without
            # the machine's own stalls that wall time of short runs carries.
            "cpu_s": bl.stats([x.cpu_s for x in xs]),
            "maxrss_mb": bl.stats([x.maxrss_kb / 1024 for x in xs]),
        }
        res[c.name]["mb_per_s"] = mb / res[c.name]["wall_s"]["median"]
    # The lines of the text output tell whether repeats were folded; worth
    # one more run at any size once report is linear.
    if not any(res[c.name]["timed_out"] for c in cmds):
        res["text_lines"] = output_lines([str(ctx.cli), "report", str(d)])
    return res


def output_lines(argv: list[str]) -> int:
    p = subprocess.run(argv, env=bl.clean_env(), stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, check=True)
    return p.stdout.count(b"\n")


def section_report(ctx: Ctx) -> dict:
    p = ctx.p
    # (name, generator arguments, size: what the trace grows in proportion to)
    cases = {
        "single": [(f"one file, {mb} MB", ["--size-mb", str(mb)], mb)
                   for mb in p["report_single"]],
        "many": [(f"{f:,} files, {mb} MB", ["--files", str(f), "--total-mb", str(mb)], mb)
                 for f, mb in p["report_many"]],
        "cycles": [(f"{n:,} load/unload cycles", ["--cycles", str(n)], n)
                   for n in p["report_cycles"]],
    }
    groups: dict[str, list] = {}
    dirs: dict[str, Path] = {}
    for g, todo in cases.items():
        groups[g] = []
        for name, args, size in todo:
            guess = predicted_s(groups[g], size)
            if guess is not None and guess > p["report_timeout"]:
                known = math.isfinite(guess)
                log(f"    skipping {name}: " + (f"about {guess:.0f} s predicted" if known
                                                 else "the smaller case timed out"))
                groups[g].append({"case": name, "size": size,
                                  "skipped_predicted_s": round(guess) if known else None})
                continue
            dirs[name] = trace_case(ctx, g, args)
            res = report_case(ctx, name, dirs[name])
            groups[g].append(res | {"size": size})
    return {"groups": groups, "linearity": linearity(ctx, groups, dirs),
            "timeout_s": p["report_timeout"]}


def predicted_s(done: list[dict], size: float) -> float | None:
    """The faster format's time at `size`, extrapolated from the growth
    between the last two cases of the group (t ~ size^k, k >= 1), or None.
    A case predicted past the timeout is skipped (and not even generated):
    while report is quadratic, a gigabyte would hold the machine for hours
    to print '> timeout'."""
    ran = [c for c in done if "text" in c]
    if len(ran) < 2:
        return None
    a, b = ran[-2], ran[-1]
    best = None
    for fmt in ("text", "json"):
        if b[fmt]["timed_out"]:
            continue
        ta, tb = a[fmt]["wall_s"]["median"], b[fmt]["wall_s"]["median"]
        k = max(1.0, math.log(tb / ta) / math.log(b["size"] / a["size"]))
        t = tb * (size / b["size"]) ** k
        best = t if best is None else min(best, t)
    return float("inf") if best is None else best


def linearity(ctx: Ctx, groups: dict, dirs: dict[str, Path]) -> list[dict]:
    """Time ratio between consecutive cases whose input doubled (±10 %):
    linear means about 2. The two cases of a pair are run again in the same
    rounds, and the ratio is the median of the rounds' own ratios, of wall
    time and of CPU time: run minutes apart, as the cases are, their times
    also carry the machine's drift (on the 2-core VM the same 1 GB report
    took 0.8 s in one minute and 1.3 s in another). `sequential_ratio` is
    the ratio of the cases' own medians."""
    out = []
    for g, cases in groups.items():
        cases = [c for c in cases if "text" in c]
        for a, b in zip(cases, cases[1:]):
            if not 1.8 <= b["mb"] / a["mb"] <= 2.2:
                continue
            for fmt in ("text", "json"):
                if a[fmt]["timed_out"] or b[fmt]["timed_out"]:
                    continue
                row = {"group": g, "from": a["case"], "to": b["case"], "format": fmt,
                       "size_ratio": b["mb"] / a["mb"],
                       "sequential_ratio": b[fmt]["wall_s"]["median"] / a[fmt]["wall_s"]["median"]}
                if b[fmt]["wall_s"]["median"] > SLOW_S:
                    row["time_ratio"] = row["sequential_ratio"]
                else:
                    row |= paired_ratios(ctx, fmt, dirs[a["case"]], dirs[b["case"]])
                out.append(row)
    return out


def paired_ratios(ctx: Ctx, fmt: str, a: Path, b: Path) -> dict:
    """`report` of `a` and of `b`, interleaved: the medians of the per-round
    ratios b/a of wall time and of CPU time (report is single-threaded: its
    CPU time is its work, without the stalls of the machine)."""
    flag = ["--json"] if fmt == "json" else []
    cmds = [bl.Cmd(n, [str(ctx.cli), "report", *flag, str(d)], stdout="null")
            for n, d in (("a", a), ("b", b))]
    s = bl.interleave(cmds, ctx.p["report_pair_runs"], warmup=1,
                      timeout=ctx.p["report_timeout"], log=log)
    rounds = list(zip(s["a"], s["b"]))
    return {
        "time_ratio": statistics.median(y.wall_s / x.wall_s for x, y in rounds),
        "cpu_ratio": statistics.median(y.cpu_s / max(x.cpu_s, 1e-6)
                                       for x, y in rounds),
        "paired_rounds": len(rounds),
    }


# ---------------------------------------------------------------------------
# Set-up and main


# ---------------------------------------------------------------------------
# 8: report --fleet (issue 13)


FLEET_GEN = Path(__file__).resolve().parent / "gen_fleet.py"


def fleet_case(ctx: Ctx, ranks: int) -> Path:
    """A generated fleet: `ranks` run directories of 50 processes each, two
    odd ranks; reused while the generators are unchanged."""
    tag = hashlib.sha256(FLEET_GEN.read_bytes() + GEN.read_bytes()).hexdigest()[:8]
    d = ctx.work / "traces" / f"fleet-{ranks}-{tag}"
    if not (d / ".done").exists():
        shutil.rmtree(d, ignore_errors=True)
        log(f"    generating {d.name}")
        odd = "137,842" if ranks > 842 else f"{ranks // 7},{ranks // 2}"
        subprocess.run([sys.executable, str(FLEET_GEN), str(d / "runs"), "--ranks", str(ranks),
                        "--odd", odd], check=True)
        (d / ".done").touch()
    return d / "runs"


def section_fleet(ctx: Ctx) -> dict:
    """`report --fleet` on N ranks x 50 processes (the issue's target: 1,000 x 50 in at most
    10 s, memory bounded), text and JSON, interleaved, peak RSS."""
    cases = []
    for ranks in ctx.p["fleet_ranks"]:
        d = fleet_case(ctx, ranks)
        files = sum(1 for _ in d.glob("*/*.jsonl"))
        mb = sum(f.stat().st_size for f in d.glob("*/*.jsonl")) / 2**20
        cmds = [bl.Cmd("text", [str(ctx.cli), "report", "--fleet", str(d)], stdout="null", rss=True),
                bl.Cmd("json", [str(ctx.cli), "report", "--fleet", "--json", str(d)],
                       stdout="null", rss=True)]
        s = bl.interleave(cmds, ctx.p["fleet_runs"], warmup=1, timeout=ctx.p["report_timeout"],
                          log=log)
        res = {"ranks": ranks, "files": files, "mb": round(mb, 1)}
        for c in cmds:
            xs = s[c.name]
            res[c.name] = {"timed_out": any(x.timed_out for x in xs),
                           "wall_s": bl.wall_stats(xs),
                           "maxrss_mb": bl.stats([x.maxrss_kb / 1024 for x in xs])}
        cases.append(res)
    return {"cases": cases}


# report's progress bar, on a terminal: a report long enough to get one (its
# time is mostly per file, so many small files), and one too short.
PROGRESS_CASES = (("20,000 files, 400 MB", "many", ["--files", "20000", "--total-mb", "400"]),
                  ("one file, 256 MB", "single", ["--size-mb", "256"]))
# What a frame of the bar holds (cli/src/progress.rs's template).
BAR_FRAME = re.compile(rb"(reading|analysing) *\[[=> ]+\] [0-9.]+ [KMG]?i?B/")
CLEAR_LINE = b"\x1b[2K"


def on_terminal(argv: list[str]) -> dict:
    """Runs `argv` with its stderr on a new pty (stdout to /dev/null), as in a
    user's terminal, and reads what it draws there as it comes: when the
    first frame of the progress bar appeared, how many, and whether the last
    thing drawn cleared it."""
    import fcntl
    import pty
    import select
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    t0 = time.monotonic()
    p = subprocess.Popen(argv, env=bl.clean_env(), stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    chunks: list[tuple[float, bytes]] = []
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if not ready:
            # A descendant may hold the pty after report ended: stop then.
            if p.poll() is not None:
                break
            continue
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # EIO: every writer of the pty has closed it
            break
        if not data:
            break
        chunks.append((time.monotonic() - t0, data))
    rc = p.wait()
    wall = time.monotonic() - t0
    os.close(master)
    frames = [t for t, d in chunks if BAR_FRAME.search(d)]
    drawn = b"".join(d for _, d in chunks)
    tail = drawn[drawn.rfind(CLEAR_LINE):] if CLEAR_LINE in drawn else drawn
    return {"rc": rc, "wall_s": round(wall, 3), "frames": len(frames),
            "first_frame_s": round(frames[0], 3) if frames else None,
            "cleared": bool(frames) and CLEAR_LINE in drawn and not BAR_FRAME.search(tail),
            "bytes_drawn": len(drawn)}


def section_progress(ctx: Ctx) -> dict:
    cases = []
    for name, kind, args in PROGRESS_CASES:
        d = trace_case(ctx, kind, args)
        runs = [on_terminal([str(ctx.cli), "report", str(d)]) for _ in range(ctx.p["progress_runs"])]
        log(f"    {name}: " + ", ".join(f"{r['wall_s']} s, bar at {r['first_frame_s']}" for r in runs))
        cases.append({"case": name, "mb": round(dir_mb(d), 1), "runs": runs})
    return {"cases": cases, "quiet_for_s": 1.0}


SECTIONS = {
    "events": section_events,
    "idle": section_idle,
    "heavy": section_heavy,
    "startup": section_startup,
    "memory": section_memory,
    "calls": section_calls,
    "report": section_report,
    "progress": section_progress,
    "fleet": section_fleet,
}


def launcher_env(cli: Path) -> dict:
    """The variables the launcher gives a program (shim path, mode), read from
    a real run, so that the direct runs inject the shim exactly as it does."""
    with tempfile.TemporaryDirectory() as t:
        p = subprocess.run([str(cli), "-q", "--out", f"{t}/trace", "--", "env", "-0"],
                           env=bl.clean_env(), stdout=subprocess.PIPE, check=True)
    env = dict(kv.split("=", 1) for kv in p.stdout.decode().split("\0") if "=" in kv)
    keep = {k: v for k, v in env.items()
            if k in ("LD_AUDIT", "LD_PRELOAD") or k.startswith("CUDNN_TRACE")}
    keep.pop("CUDNN_TRACE_DIR", None)
    if "LD_AUDIT" not in keep:
        raise RuntimeError("the launcher set no LD_AUDIT: is the shim embedded?")
    return keep


def override_shim(env: dict, shim: Path) -> dict:
    """--shim: another build of libcdtrace.so (before/after comparisons)."""
    out = dict(env)
    out["LD_AUDIT"] = out["CUDNN_TRACE_SHIM"] = str(shim)
    # Its preload helper beside it when there is one (a build directory of
    # the workspace has none: the launcher's stays, same protocol).
    helper = shim.with_name("libcdtrace_preload.so")
    if helper.is_file():
        out["LD_PRELOAD"] = str(helper)
    return out


def real_python() -> str:
    """The interpreter itself: `python3` may be a wrapper script (pyenv),
    whose own start-up would swamp what is measured."""
    p = subprocess.run(["python3", "-c", "import sys; print(sys.executable)"],
                       stdout=subprocess.PIPE, text=True, check=True, env=bl.clean_env())
    return os.path.realpath(p.stdout.strip())


def first_line(argv: list[str]) -> str:
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return p.stdout.strip().splitlines()[0] if p.stdout.strip() else ""
    except OSError:
        return "not installed"


def machine(ctx: Ctx, command: str) -> dict:
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")), "")
    git = lambda *a: subprocess.run(["git", "-C", str(ctx.root), *a], stdout=subprocess.PIPE,  # noqa: E731
                                    text=True).stdout.strip()
    return {
        "date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": command,
        "mode": ctx.mode,
        "cpu": cpu,
        "cores": os.cpu_count(),
        "mem_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "kernel": platform.release(),
        "glibc": os.confstr("CS_GNU_LIBC_VERSION"),
        "distro": next((line.split("=", 1)[1].strip('"') for line in
                        Path("/etc/os-release").read_text().splitlines()
                        if line.startswith("PRETTY_NAME=")), ""),
        "rustc": first_line(["rustc", "--version"]),
        "cc": first_line(["cc", "--version"]),
        "python": ctx.python,
        "tools": {t: first_line([t, "--version"]) for t in ("strace", "valgrind", "ltrace")},
        "commit": git("rev-parse", "--short=12", "HEAD"),
        # Tracked files changed since the commit (the measured code may differ).
        "dirty": [line.split(maxsplit=1)[1] for line in
                  git("status", "--porcelain", "--untracked-files=no").splitlines()],
        "shim_env": ctx.shim_env,
        "params": ctx.p,
    }


def record_run(path: Path, m: dict, sections: list[str]) -> None:
    """machine.json describes the machine and lists every run that wrote into
    this results folder (an `--only` run replaces some sections only)."""
    run = {k: m.pop(k) for k in ("date_utc", "command", "mode", "commit", "dirty")}
    run["sections"] = sections
    old = json.loads(path.read_text()) if path.exists() else {}
    runs = old.get("runs", [])
    if "command" in old:  # written before runs were listed: one run of every section
        runs = [{k: old.get(k) for k in run if k != "sections"} | {"sections": list(SECTIONS)}]
    m["runs"] = runs + [run]
    path.write_text(json.dumps(m, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=PARAMS, default="default")
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--build", type=Path, required=True, help="where run.sh built the programs")
    ap.add_argument("--cli", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--shim", type=Path, help="measure this libcdtrace.so instead of the CLI's")
    ap.add_argument("--baseline", type=Path,
                    help="section 3 also runs this libcdtrace.so, in the same rounds")
    ap.add_argument("--baseline-cli", type=Path,
                    help="section 4 also runs this cudnn-trace binary, in the same rounds")
    ap.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    ap.add_argument("--command", default="", help="the command line, for the record")
    a = ap.parse_args()
    only = [s for s in a.only.split(",") if s]
    unknown = set(only) - set(SECTIONS)
    if unknown:
        ap.error(f"unknown sections: {', '.join(sorted(unknown))} (know {', '.join(SECTIONS)})")
    env = launcher_env(a.cli)
    if a.shim:
        env = override_shim(env, a.shim.resolve())
    a.out.mkdir(parents=True, exist_ok=True)
    ctx = Ctx(a.mode, PARAMS[a.mode], a.root, a.build / "bin", a.build / "lib", a.cli, env,
              real_python(), a.out, a.build / "work",
              override_shim(env, a.baseline.resolve()) if a.baseline else None,
              a.baseline_cli.resolve() if a.baseline_cli else None)
    bl.RUNRSS = str(ctx.bin / "runrss")
    record_run(a.out / "machine.json", machine(ctx, a.command), only)
    for name in only:
        log(f"== {name}")
        t0, load0 = time.monotonic(), loadavg()
        res = SECTIONS[name](ctx)
        res["_meta"] = {"seconds": round(time.monotonic() - t0, 1), "loadavg_before": load0,
                        "loadavg_after": loadavg(), "mode": a.mode, "command": a.command}
        (a.out / f"{name}.json").write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
        log(f"   {name}: {res['_meta']['seconds']} s")


if __name__ == "__main__":
    main()
