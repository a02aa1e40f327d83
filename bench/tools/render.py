#!/usr/bin/env python3
"""Writes docs/benchmarks.md from a results folder of bench/run.sh (one JSON
file per section, machine.json). Sections that were not measured are listed
as such; nothing here measures."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

import cost


def load(results: Path, name: str) -> dict | None:
    f = results / f"{name}.json"
    return json.loads(f.read_text()) if f.exists() else None


def f_(x: float, d: int = 2) -> str:
    return f"{x:,.{d}f}"


def stat(s: dict, d: int = 2, scale: float = 1.0) -> str:
    """median (min–max)"""
    return (f"{f_(s['median'] * scale, d)} ({f_(s['min'] * scale, d)}–"
            f"{f_(s['max'] * scale, d)})")


def verdict(ok: bool | None) -> str:
    return {True: "met", False: "**missed**", None: "not measured"}[ok]


def wall_verdict(heavy: dict, target: float) -> str:
    """The dlopen-heavy wall-time target, judged by the larger of the two
    ratios, and only when that lies further from the target than the bare
    run's own spread (median against fastest): on a machine whose speed
    drifts, a ratio a hair under the target in one run is not a verdict."""
    w = heavy["ratios_wall"]
    ratio = max(w["traced/bare"], w.get("traced/bare paired", 0.0))
    b = heavy["wall_s"]["bare"]
    noise = (b["median"] - b["min"]) / b["median"]
    if abs(ratio - target) <= noise:
        return f"within this run's noise (bare ±{noise:.0%}; see the notes)"
    return verdict(ratio <= target)


def table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def meta_note(sec: dict) -> str:
    m = sec["_meta"]
    return (f"\n*{m['mode']} run, {m['seconds']} s; load average "
            f"{m['loadavg_before'][0]:.2f} before, {m['loadavg_after'][0]:.2f} after.*\n")


# ---------------------------------------------------------------------------
# Targets of issue 10


def floor_note(st: dict) -> str:
    """What a do-nothing launcher process with the shim adds to `/bin/true`
    (§4's *floor*), beside the launcher's figure: the part of it no launcher
    process avoids."""
    f = st.get("true_floor_added_ms")
    if f is None:
        return ""
    return f"; a do-nothing launcher process with the shim: {f:+,.2f} ms"


def true_startup_row(st: dict) -> list[str]:
    """The `/bin/true` target: with output to a file (as hyperfine and
    scripts run it) and, where measured, in a terminal, where the launcher
    runs the program on a pty of its own; judged by each."""
    a = st["true_launcher_added_ms"]
    what, ok = f"{a:+,.2f} ms, output to a file" + floor_note(st), verdict(a <= 2)
    t = st.get("true_tty_added_ms")
    if t is not None:
        what += f"; in a terminal {t:+,.2f} ms"
        ok = ("met" if a <= 2 and t <= 2 else "**missed**" if a > 2 and t > 2
              else f"{verdict(a <= 2)} to a file, {verdict(t <= 2)} in a terminal")
    return ["`/bin/true` under the launcher: ≤ +2 ms", what, ok]


def python_startup_row(st: dict) -> list[str]:
    """The `python3 -c pass` target. Python's start varies by tens of ms
    between runs, more than the launcher's whole cost: a median within that
    spread is not a verdict. The launcher's fixed cost, the +ms it adds to
    `/bin/true`, is what it adds to any program's start, so that share of
    Python's start is what the verdict rests on."""
    p = st["python_launcher_added_pct"]
    bare = st["wall_ms"]["python_bare"]
    spread = bare["max"] - bare["min"]
    fixed = st["true_launcher_added_ms"] / bare["median"] * 100
    what = (f"{p:+,.1f} % (medians; bare spread {spread:,.0f} ms); the launcher's fixed "
            f"{st['true_launcher_added_ms']:+,.2f} ms is {fixed:+,.1f} % of it")
    f = st.get("true_floor_added_ms")
    if f is not None:
        what += f", a do-nothing launcher process's {f:+,.2f} ms {f / bare['median'] * 100:+,.1f} %"
    return ["`python3 -c pass` under the launcher: ≤ +2 %", what, verdict(max(p, fixed) <= 2)]


def target_rows(r: dict) -> list[list[str]]:
    rows = []
    ev, idle, heavy = r.get("events"), r.get("idle"), r.get("heavy")
    if ev:
        t = ev["syscalls_per_event_total"]
        rows.append(["per recorded event: ≤ 3 system calls on average, the `write` included",
                     f"{f_(t, 1)}", verdict(t <= 3)])
    else:
        rows.append(["per recorded event: ≤ 3 system calls", "–", verdict(None)])
    if idle:
        t = idle["syscalls_per_cycle_total"]
        rows.append(["nothing recorded: no system call from the shim",
                     f"{f_(t, 1)} per dlopen/dlclose", verdict(t == 0)])
    if heavy:
        w = heavy["ratios_wall"]
        paired = w.get("traced/bare paired")
        rows.append(["dlopen-heavy program: traced/bare ≤ 1.05 in wall time",
                     f_(w["traced/bare"]) + (f" (medians; round by round {f_(paired)})"
                                             if paired else ""),
                     wall_verdict(heavy, 1.05)])
        i = heavy["instructions"]["ratio"]
        rows.append(["dlopen-heavy program: traced/bare ≤ 1.03 in instructions", f_(i, 3),
                     verdict(i <= 1.03)])
        rows.append(["dlopen-heavy program: `LD_DEBUG=libs,files`/traced ≥ 1.5",
                     f_(w["ld_debug/traced"]), verdict(w["ld_debug/traced"] >= 1.5)])
    st = r.get("startup")
    if st:
        rows.append(true_startup_row(st))
        rows.append(python_startup_row(st))
    mem = r.get("memory")
    if mem:
        a = mem["shim_added"]
        rows.append(["added memory in a small program: ≤ 1 MB RSS",
                     f"{a['rss_kb'] / 1024:+,.2f} MB", verdict(a["rss_kb"] <= 1024)])
        rows.append(["added memory: ≤ 0.3 MB private", f"{a['private_kb'] / 1024:+,.2f} MB",
                     verdict(a["private_kb"] <= 0.3 * 1024)])
        rows.append(["added threads: 0", f"{a['threads']:+d}", verdict(a["threads"] == 0)])
    rows += report_target_rows(r.get("report"))
    rows.append(progress_target_row(r.get("progress")))
    rows.append(gpu_target_row(r.get("gpu") or {}))
    return rows


def gpu_target_row(gpu: dict) -> list[str]:
    """The GPU target from `bench/gpu.sh`'s torch_conv results, when the
    results folder holds them (`gpu/torch_conv.json`): the launcher's and the
    shim's ratios of medians, wall and CPU time."""
    name = "GPU: PyTorch import + convolution, traced/bare ≤ 1.01 (≥ 10 interleaved runs)"
    got = cost.gpu_ratios(gpu)
    if not got:
        return [name, "`bench/gpu.sh` on the GPU machine", verdict(None)]
    t, ratio = got
    what = (f"launcher {ratio['wall_s', 'traced']:.3f} wall, {ratio['cpu_s', 'traced']:.3f} CPU; "
            f"shim alone {ratio['wall_s', 'shim']:.3f} wall, {ratio['cpu_s', 'shim']:.3f} CPU "
            f"(n={t['runs']}; §8 for the spread and the bound from counts)")
    return [name, what, verdict(ratio["wall_s", "traced"] <= 1.01 and ratio["cpu_s", "traced"] <= 1.01)]


def sec_gpu(results: Path, gpu: dict) -> str:
    """Section 8: the static description, the latest `bench/gpu.sh` results
    in the folder (`gpu/*.json`), and the folder's `gpu.md` (hand-written)."""
    s = [GPU]
    if gpu:
        rows = []
        for script, t in sorted(gpu.items()):
            base_w, base_c = t["wall_s"]["bare"]["median"], t["cpu_s"]["bare"]["median"]
            paired = t.get("paired_wall_diff_s", {})
            for side in ("bare", "shim", "traced"):
                w, c = t["wall_s"][side], t["cpu_s"][side]
                d = paired.get(side)
                rows.append([f"`{script}.py`" if side == "bare" else "",
                             str(t["runs"]) if side == "bare" else "", side,
                             f"{w['median']:.3f} ({w['min']:.3f}–{w['max']:.3f})",
                             f"{w['median'] / base_w:.3f}",
                             f"{d['median']:+.3f} ({d['min']:+.3f}–{d['max']:+.3f})" if d and side != "bare" else "",
                             f"{c['median']:.3f} ({c['min']:.3f}–{c['max']:.3f})",
                             f"{c['median'] / base_c:.3f}"])
        s.append("\nLatest results in this folder (`gpu/`), n interleaved rounds plus one "
                 "warm-up each; \"paired\" is the median (min–max) of the round-by-round "
                 "differences to bare:\n\n")
        s.append(table(["script", "n", "side", "wall s, median (min–max)", "÷ bare",
                        "paired wall +s", "CPU s (user + sys), median (min–max)", "÷ bare"],
                       rows))
    notes = results / "gpu.md"
    if notes.exists():
        s.append("\n" + notes.read_text())
    return "".join(s)


def load_gpu(results: Path) -> dict:
    """`gpu/NAME.json` files of compare.py (with CPU times), by NAME."""
    d = results / "gpu"
    if not d.is_dir():
        return {}
    return {p.stem: json.loads(p.read_text()) for p in sorted(d.glob("*.json"))
            if "cpu_s" in json.loads(p.read_text())}


GROUPS = ("single", "many", "cycles")


def skipped_text(c: dict) -> str:
    p = c["skipped_predicted_s"]
    return ("not run: the smaller case timed out" if p is None
            else f"not run: about {p:,} s predicted")


def report_cases(rep: dict) -> list[dict]:
    """The cases that ran (a case predicted to outlast the timeout did not)."""
    return [c for cases in rep["groups"].values() for c in cases if "text" in c]


def gigabyte_cases(rep: dict) -> list[tuple[dict, dict]]:
    """(case, the largest case of its group that ran) for the 1 GB cases."""
    out = []
    for g in ("single", "many"):
        cases = rep["groups"].get(g, [])
        ran = [c for c in cases if "text" in c]
        for c in cases:
            if c.get("mb", c.get("size", 0)) >= 1000 and ran:
                out.append((c, max(ran, key=lambda x: x["mb"])))
    return out


def report_target_rows(rep: dict | None) -> list[list[str]]:
    if not rep:
        return [["`report`: memory, time, throughput", "–", verdict(None)]]
    rows = []
    cases = report_cases(rep)
    rss = lambda c: max(c[f]["maxrss_mb"]["median"] for f in ("text", "json"))  # noqa: E731
    if not gigabyte_cases(rep):
        big = max(cases, key=lambda c: c["mb"])
        rows.append(["`report`: ≤ 200 MB RSS for 1 GB (one file; 10,000 files)",
                     f"not run (`--full`); {f_(rss(big), 0)} MB for {f_(big['mb'], 0)} MB",
                     verdict(None)])
    for c, big in gigabyte_cases(rep):
        if "text" not in c:
            rows.append([f"`report`: ≤ 200 MB RSS for {c['case']}",
                         f"{skipped_text(c)}; {f_(rss(big), 0)} MB for {big['case']}",
                         verdict(None)])
        else:
            peak = rss(c)
            out = any(c[f]["timed_out"] for f in ("text", "json"))
            rows.append([f"`report`: ≤ 200 MB RSS for {c['case']}",
                         f"{'≥ ' if out else ''}{f_(peak, 0)} MB" + (" (timed out)" if out else ""),
                         verdict(False if peak > 200 else None if out else True)])
    lin = rep["linearity"]
    if lin:
        worst = max(lin, key=lambda x: x["time_ratio"])
        said = (f"worst {f_(worst['time_ratio'])}× in wall time ({worst['group']}, "
                f"{worst['format']}, {worst['from']} → {worst['to']})")
        ok = worst["time_ratio"] <= 2.2
        if all("cpu_ratio" in x for x in lin):
            # Judged by CPU time where recorded: report is single-threaded,
            # and wall time of sub-second runs carries the machine's stalls.
            cpu = max(lin, key=lambda x: x["cpu_ratio"])
            said += (f"; in CPU time worst {f_(cpu['cpu_ratio'])}× ({cpu['group']}, "
                     f"{cpu['format']}, {cpu['from']} → {cpu['to']})")
            ok = cpu["cpu_ratio"] <= 2.2
        rows.append(["`report`: time linear (twice the input, ≤ 2.2× the time)", said,
                     verdict(ok)])
    for fmt in ("text", "json"):
        ok = [c for c in cases if not c[fmt]["timed_out"]]
        big = max(ok, key=lambda c: c["mb"]) if ok else None
        if big:
            mbs = big[fmt]["mb_per_s"]
            rows.append([f"`report{' --json' if fmt == 'json' else ''}`: ≥ 300 MB/s",
                         f"{f_(mbs, 0)} MB/s ({big['case']})", verdict(mbs >= 300)])
    cyc = rep["groups"].get("cycles", [])
    lines = [(c["case"], c["text_lines"]) for c in cyc if "text_lines" in c]
    if len(lines) >= 2:
        grows = lines[-1][1] > lines[0][1] + 10
        rows.append(["`report`: repeated identical events folded into one line with a count",
                     " / ".join(f"{n:,} lines for {c}" for c, n in lines), verdict(not grows)])
    return rows


def span(xs: list[float]) -> str:
    lo, hi = f_(min(xs), 2), f_(max(xs), 2)
    return lo if lo == hi else f"{lo}–{hi}"


def progress_target_row(pr: dict | None) -> list[str]:
    """Met when every report that ran past the wait (with a margin for the
    first frame) showed its bar no sooner than the wait and cleared it, and
    none that ended within it drew anything."""
    target = "`report`: a progress bar on a terminal past one second"
    if not pr:
        return [target, "not measured (section `progress`)", verdict(None)]
    wait = pr["quiet_for_s"]
    said, ok, long_seen = [], True, False
    for c in pr["cases"]:
        for r in c["runs"]:
            if r["wall_s"] > wait + 0.3:
                long_seen = True
                ok &= r["first_frame_s"] is not None and r["first_frame_s"] >= wait and r["cleared"]
            elif r["wall_s"] < wait:
                ok &= r["frames"] == 0
        med = statistics.median(r["wall_s"] for r in c["runs"])
        firsts = [r["first_frame_s"] for r in c["runs"] if r["first_frame_s"] is not None]
        said.append(f"{c['case']}: {f_(med, 2)} s, "
                    + (f"bar from {span(firsts)} s, cleared at the end" if firsts else "no bar")
                    + f" ({len(c['runs'])} run{'s' if len(c['runs']) != 1 else ''})")
    return [target, "; ".join(said), verdict(ok if long_seen else None)]


# ---------------------------------------------------------------------------
# Sections


def sec_events(ev: dict, idle: dict | None) -> str:
    s = ["## 1. A recorded event\n\n",
         f"`dlloop {ev['library']} N`: `dlopen(path, RTLD_NOW)` and `dlclose` N times; each "
         f"cycle writes {f_(ev['events_per_cycle'], 1)} events ({', '.join(ev['event_kinds'])}). "
         "Costs are the growth between two loop sizes, traced minus bare, so start-up and exit "
         "cancel.\n",
         meta_note(ev), "\n**System calls per event** (`strace -f -c`):\n\n"]
    rows = [[k, f_(v, 2), f_(ev["syscalls_per_cycle"][k], 2)]
            for k, v in ev["syscalls_per_event"].items()]
    rows.append(["**total**", f"**{f_(ev['syscalls_per_event_total'], 2)}**",
                 f"**{f_(ev['syscalls_per_cycle_total'], 2)}**"])
    s.append(table(["system call", "per event", "per cycle"], rows))
    s.append("\n**Where they come from** (`strace -k`: innermost shim function; the release "
             "build inlines, so `ForkSafeLock::with`, `trace::pid` and `trace::tid` show as "
             "their callers), per cycle:\n\n")
    s.append(table(["system call ← shim function", "per cycle"],
                   [[f"`{k}`", f_(v, 2)] for k, v in ev["syscall_sites_per_cycle"].items()]))
    i, t = ev["instructions"], ev["time"]
    s.append(f"\n**Instructions** (callgrind, N = {i['n'][0]} and {i['n'][1]}): bare "
             f"{i['bare_per_cycle']:,} per cycle, traced {i['traced_per_cycle']:,}: "
             f"**+{i['added_per_event']:,} per event**, {f_(i['ratio_per_cycle'])}× per cycle.\n\n")
    s.append(f"**Time** (N = {t['n']}, {t['added_us_per_cycle']['n']} interleaved rounds, "
             "the program's own clock around its loop; median (min–max)):\n\n")
    s.append(table(["", "µs"], [
        ["bare, per cycle", stat(t["bare_us_per_cycle"])],
        ["traced, per cycle", stat(t["traced_us_per_cycle"])],
        ["**added per event** (paired by round)", f"**{stat(t['added_us_per_event'])}**"],
    ]))
    return "".join(s)


def sec_idle(idle: dict) -> str:
    s = ["\n## 2. Nothing recorded\n\n",
         f"The same loop on `{idle['library']}`, a name outside the CUDA family: no event is "
         "written, so everything the shim does is overhead.\n", meta_note(idle), "\n"]
    sc = idle["syscalls_per_cycle"]
    s.append(table(["system call", "per dlopen/dlclose cycle"],
                   [[k, f_(v, 2)] for k, v in sc.items()] +
                   [["**total**", f"**{f_(idle['syscalls_per_cycle_total'], 2)}**"]]))
    s.append("\nFrom:\n\n")
    s.append(table(["system call ← shim function", "per cycle"],
                   [[f"`{k}`", f_(v, 2)] for k, v in idle["syscall_sites_per_cycle"].items()]))
    i, t = idle["instructions"], idle["time"]
    s.append(f"\nInstructions per cycle: bare {i['bare_per_cycle']:,}, traced "
             f"{i['traced_per_cycle']:,} (+{i['added_per_cycle']:,}, **{f_(i['ratio_per_cycle'])}×**; "
             f"whole run {f_(i['ratio_whole_run'])}×). Time per cycle: bare "
             f"{stat(t['bare_us_per_cycle'])} µs, traced {stat(t['traced_us_per_cycle'])} µs, "
             f"added {stat(t['added_us_per_cycle'])} µs.\n")
    return "".join(s)


def sec_heavy(h: dict) -> str:
    s = ["\n## 3. The dlopen-heavy program\n\n",
         f"`dlheavy DIR {h['nlibs']} {h['nreopen']}`: {h['nlibs']:,} distinct CUDA-named "
         f"libraries opened and kept, then {h['nreopen']:,} `dlopen`/`dlclose` pairs of those "
         f"paths (each served by the object already loaded). The traced run writes "
         f"{', '.join(f'{n:,} {k}' for k, n in h['event_kinds'].items())} events.\n",
         meta_note(h), "\n"]
    w = h["wall_s"]
    bare, traced = w["bare"]["median"], w["traced"]["median"]
    names = {"bare": "bare", "traced": "traced (shim)", "ld_debug": "`LD_DEBUG=libs,files` (to a file)",
             "strace_openat": "`strace -f -e trace=openat` (to a file)"}
    if "baseline" in w:
        names["baseline"] = "traced by the baseline build (`--baseline`, same rounds)"
    rows = [[names[k], stat(w[k], 3), f_(w[k]["median"] / bare), f_(w[k]["median"] / traced)]
            for k in names]
    lt = h["ltrace"]
    if lt["extrapolated_full_s"] > 0:
        rows.append(["`ltrace -f -e dlopen` (extrapolated, see below)",
                     f"≈ {f_(lt['extrapolated_full_s'], 0)}", f"≈ {f_(lt['extrapolated_ratio'], 0)}",
                     f"≈ {f_(lt['extrapolated_full_s'] / traced, 0)}"])
    else:
        # Under load the three small sizes may not fit a growing curve.
        rows.append(["`ltrace -f -e dlopen`", "not extrapolated (its three sizes do not fit a "
                     "growing curve in this run)", "", ""])
    s.append(table(["run", "wall s, median (min–max)", "÷ bare", "÷ traced"], rows))
    r = h["ratios_wall"]
    if "baseline/bare paired" in r:
        s.append(f"\nRound by round, traced/bare is **{f_(r['traced/bare paired'], 3)}** for this "
                 f"build and {f_(r['baseline/bare paired'], 3)} for the baseline "
                 f"(`{h.get('baseline', '?')}`).\n")
    i = h["instructions"]
    s.append(f"\nInstructions (callgrind, {i['nlibs']:,} libraries, {i['nreopen']:,} re-opens): "
             f"bare {i['bare']:,}, traced {i['traced']:,}: **{f_(i['ratio'], 3)}×**.\n\n")
    pr = i.get("per_reopen")
    if pr:
        s.append(f"Per re-open (cachegrind, {pr['nlibs']:,} libraries, {pr['nreopen']:,} re-opens "
                 f"minus none): bare {pr['Ir']['bare']:,.0f} instructions and "
                 f"{pr['D1mr']['bare']:,.0f} L1 data misses (the loader compares the name with "
                 f"every object loaded); the shim adds {pr['Ir']['added']:,.0f} instructions, "
                 f"{pr['D1mr']['added'] + pr['D1mw']['added']:,.1f} L1 data misses and "
                 f"{pr['I1mr']['added']:,.1f} L1 instruction misses. That walk evicts the "
                 "caches, so each line the shim touches comes from far away: its share of the "
                 "time is larger than its share of the instructions.\n\n")
    opens = ", ".join(f"{n} libraries {f_(v, 1)} s"
                      for n, v in sorted(lt["opens_s"].items(), key=lambda kv: int(kv[0])))
    r = lt["reopen_run"]
    s.append("`ltrace` is too slow to run at full size (its time grows faster than linearly "
             "with the number of objects loaded), so it ran on fewer libraries (each figure the "
             f"fastest of a few runs): opens only: {opens}; {r['nlibs']} libraries + "
             f"{r['nreopen']:,} re-opens {f_(r['s'], 1)} s against {f_(r['bare_s'], 3)} s bare "
             f"(**{f_(lt['small_ratio'], 0)}×**, measured), {f_(lt['per_reopen_ms'], 2)} ms per "
             "re-open. The full-size row fits the opens with a parabola through the three sizes "
             "and adds the re-opens at that rate: an extrapolation, good to a factor, not a "
             "measurement.\n")
    return "".join(s)


def sec_startup(st: dict) -> str:
    w = st["wall_ms"]
    s = ["\n## 4. Start-up\n\n",
         "Wall time of a whole run (spawn to exit), interleaved rounds. *shim*: the program "
         "with the launcher's `LD_AUDIT`/`LD_PRELOAD` environment but no launcher; *launcher*: "
         "`cudnn-trace --out DIR -- PROGRAM` as a user runs it (summary on stderr, to a file). "
         f"Python is `{st['python']}` itself (a pyenv shim script would add its own start-up).\n",
         meta_note(st), "\n"]
    rows = []
    hows = (("shim",) + (("floor",) if "true_floor_added_ms" in st else ()) + ("launcher",)
            + (("baseline",) if "baseline_cli" in st else ()))
    for prog, label in (("true", "`/bin/true`"), ("python", "`python3 -c pass`")):
        bare = w[f"{prog}_bare"]
        rows.append([label, "bare", stat(bare), ""])
        for how in hows:
            rows.append(["", how, stat(w[f"{prog}_{how}"]),
                         f"{st[f'{prog}_{how}_added_ms']:+,.2f} ms "
                         f"({st[f'{prog}_{how}_added_pct']:+,.1f} %)"])
    if "true_tty_added_ms" in st:
        rows.append(["`/bin/true` in a terminal", "bare", stat(w["true_bare_tty"]), ""])
        rows.append(["", "launcher", stat(w["true_launcher_tty"]),
                     f"{st['true_tty_added_ms']:+,.2f} ms"])
    s.append(table(["program", "run", "ms, median (min–max)", "added (medians)"], rows))
    if "true_tty_added_ms" in st:
        s.append("\n*in a terminal*: each run's stdin, stdout and stderr on a new pty, the "
                 "controlling terminal of its session (`benchlib.run_in_terminal`), as from a "
                 "user's shell. The launcher then runs the program on a pty of its own, under a "
                 "session leader, and relays its output from a thread "
                 "(`core/src/launch/session.rs`); the rows above give every run /dev/null and a "
                 "file, as hyperfine and scripts do.\n")
    if "true_floor_added_ms" in st:
        s.append("\n*floor*: the program started by `bench/c/spawn_floor.c` with the shim's "
                 "environment, a static glibc program that only spawns it (CLONE_VFORK) and "
                 "waits: what any launcher that is a process of its own costs here. The "
                 "launcher's own work is the difference between *launcher* and *floor*.\n")
    if "baseline_cli" in st:
        s.append(f"\n*baseline*: another build of the launcher, `{st['baseline_cli']}` "
                 "(`--baseline-cli`), run the same way in the same rounds.\n")
    c = st["true_counts"]
    i, sc = c["instructions"], c["syscalls"]
    s.append("\nCounts for `/bin/true` (instructions: callgrind, every process; system calls: "
             "`strace -f -c`, every process):\n\n")
    s.append(table(["run", "instructions", "system calls"], [
        ["bare", f"{i['bare']:,}", f"{sc['bare']:,}"],
        ["shim", f"{i['shim']:,} (+{i['shim'] - i['bare']:,})", f"{sc['shim']:,}"],
        ["launcher", f"{i['launcher']:,} (+{i['launcher'] - i['bare']:,}; the launcher process "
         f"alone {i['launcher_process']:,})", f"{sc['launcher']:,}"],
    ]))
    s.append("\nThe launcher's own profile (callgrind, inclusive) is kept in "
             "`raw/startup/launcher-profile.txt`.\n")
    by = c.get("launcher_by_program")
    if by:
        s.append("\nInstructions of the launcher process alone (callgrind; the program's own not "
                 "counted), by what the end of the run has to read. The program's stderr goes to "
                 "a file, which the launcher captures and explains: "
                 f"*ordinary stderr* is {by['stderr_bytes']:,} bytes of log lines with no known "
                 "message in them; *fake cuDNN 9* is `wrapcall plt 1`, which loads the fake "
                 "cuDNN 9 of `tests/fixtures` (the knowledge tables are read).\n\n")
        s.append(table(["program", "launcher instructions"], [
            ["`/bin/true`", f"{by['true']:,}"],
            ["`python3 -c pass`", f"{by['python']:,}"],
            ["ordinary stderr (`sh -c 'cat LOG >&2'`)", f"{by['stderr']:,}"],
            ["fake cuDNN 9 (`wrapcall plt 1`)", f"{by['cuda']:,}"],
        ]))
    return "".join(s)


def sec_memory(m: dict) -> str:
    s = ["\n## 5. Memory of a small program\n\n",
         "`memprobe` (a C program that prints its pid and waits) read from "
         "`/proc/PID/smaps_rollup` and `/proc/PID/status` at its pause point.\n", meta_note(m), "\n"]
    rows = []
    for k, label in (("rss_kb", "RSS kB"), ("pss_kb", "PSS kB"), ("private_kb", "private kB"),
                     ("threads", "threads")):
        rows.append([label, stat(m["bare"][k], 0), stat(m["shim"][k], 0),
                     f"{m['shim_added'][k]:+,}", stat(m["launcher"][k], 0),
                     f"{m['launcher_added'][k]:+,}"])
    s.append(table(["", "bare", "shim", "added", "under the launcher", "added"], rows))
    return "".join(s)


def sec_calls(c: dict) -> str:
    s = ["\n## 6. A wrapped cuDNN call\n\n",
         f"`wrapcall plt|dlsym {c['n']:,}`: `cudnnGetVersion()` of the fake cuDNN 9 "
         "(`libcudnn_graph.so.9`, tests/fixtures) called in a loop through the PLT or through a "
         "`dlsym` pointer from an `RTLD_LOCAL` handle; traced, both reach the shim's thunk "
         "(`la_symbind64`).\n", meta_note(c), "\n"]
    rows = []
    for how in ("plt", "dlsym"):
        x = c[how]
        rows.append([how, stat(x["bare_ns"]), stat(x["traced_ns"]), f"**{stat(x['added_ns'])}**",
                     f"{x['instructions']['added_per_call']:.0f}"])
    s.append(table(["via", "bare ns/call", "traced ns/call", "added ns (paired)",
                    "added instructions/call"], rows))
    return "".join(s)


def sec_report(rep: dict) -> str:
    s = ["\n## 7. `report` on synthetic traces\n\n",
         "Traces from `bench/tools/gen_trace.py` (the real format: a PyTorch-like process whose "
         "cuDNN 9 dispatcher searches its versioned names, loads, versions, calls, NVRTC "
         "failures, unloads, repeated; and the shim's exact lines for a load/unload loop). "
         "Output to /dev/null; peak RSS from `wait4` through `bench/c/runrss`; "
         f"runs past {rep['timeout_s']} s are stopped, and a case whose time, extrapolated from "
         "the growth between the two before it, would pass that is not run. A case slower than "
         "5 s runs once; the others take the median of several interleaved rounds after a "
         "warm-up.\n", meta_note(rep), "\n"]
    rows = []
    for g in GROUPS:
        for c in rep["groups"].get(g, []):
            cells = [c["case"], f_(c["mb"], 1) if "mb" in c else "–"]
            if "text" not in c:
                rows.append(cells + [skipped_text(c)] + [""] * 6)
                continue
            for fmt in ("text", "json"):
                x = c[fmt]
                if x["timed_out"]:
                    cells += [f"> {rep['timeout_s']}", "–",
                              f"≥ {f_(x['maxrss_mb']['median'], 0)} (so far)"]
                else:
                    cells += [stat(x["wall_s"], 3), f_(x["mb_per_s"], 1),
                              f_(x["maxrss_mb"]["median"], 0)]
            cells.append(f"{c['text_lines']:,}" if "text_lines" in c else "–")
            rows.append(cells)
    s.append(table(["input", "MB", "text s", "MB/s", "RSS MB", "`--json` s", "MB/s", "RSS MB",
                    "text lines"], rows))
    if rep["linearity"]:
        s.append("\nTime ratio when the input doubles (linear: 2): the two cases run again in "
                 "the same rounds, medians of the rounds' own ratios; and the ratio of the "
                 "cases' medians above, taken minutes apart:\n\n")
        s.append(table(["from", "to", "format", "wall time ratio", "CPU time ratio",
                        "ratio of the medians above"],
                       [[x["from"], x["to"], x["format"], f_(x["time_ratio"]),
                         f_(x["cpu_ratio"]) if "cpu_ratio" in x else "–",
                         f_(x.get("sequential_ratio", x["time_ratio"]))]
                        for x in rep["linearity"]]))
    return "".join(s)


def sec_fleet(fl: dict) -> str:
    s = ["\n## 9. `report --fleet` (issue 13)\n\n",
         "A generated fleet (`bench/tools/gen_fleet.py`): one run directory per rank, 50 "
         "processes each (the trainer with the PyTorch-like cuDNN 9 life of section 7, 8 forked "
         "DataLoader workers, compile workers loading cudart and libcuda), 8 ranks per host, "
         "two odd ranks whose libcudnn_graph comes from another directory. `report --fleet DIR` "
         "reads one run at a time and keeps a few integers per process. Target: 1,000 ranks x "
         "50 processes in at most 10 s, memory bounded. Median of interleaved rounds after a "
         "warm-up (a warm page cache); peak RSS through `bench/c/runrss`.\n", meta_note(fl), "\n"]
    rows = []
    for c in fl["cases"]:
        cells = [f"{c['ranks']:,} x 50", f"{c['files']:,}", f_(c["mb"], 0)]
        for fmt in ("text", "json"):
            x = c[fmt]
            cells += [stat(x["wall_s"], 2), f_(x["maxrss_mb"]["median"], 1)]
        rows.append(cells)
    s.append(table(["ranks x processes", "files", "MB", "text s", "RSS MB", "`--json` s",
                    "RSS MB"], rows))
    return "".join(s)


GPU = """
## 8. GPU

`bench/gpu.sh` runs on the GPU machine: PyTorch import plus one convolution
(`tests/gpu/torch_conv.py`), bare and under `cudnn-trace`, interleaved, and prints
median, min and max of each and the traced/bare ratio (target ≤ 1.01 over at least
10 runs). It is not part of `run.sh`: this machine has no GPU.
"""


def changes(run: dict) -> str:
    d = run["dirty"]
    if not d:
        return ""
    # Older results recorded a flag; newer ones the modified tracked files.
    return " + uncommitted changes" + (f" to {', '.join(d)}" if isinstance(d, list) else "")


def machine_section(m: dict, label: str) -> str:
    s = ["# Benchmarks\n\n"]
    if label:
        s.append(f"**{label}**\n\n")
    s.append("Written by `bench/run.sh` (see [`bench/README.md`](../bench/README.md) for what each "
             "section measures and how). Re-run it on a quiet machine before quoting times; "
             "the counts (system calls, instructions) do not depend on load.\n\n")
    runs = m["runs"]
    s.append(table(["", ""], [
        *[["run" if len(runs) == 1 else f"run {k + 1}",
           f"{r['date_utc']}: `{r['command']}` (mode {r['mode']}; commit `{r['commit']}`"
           + changes(r) + f"; {', '.join(r['sections'])})"]
          for k, r in enumerate(runs)],
        ["CPU", f"{m['cpu']}, {m['cores']} cores, {m['mem_gib']} GiB"],
        ["system", f"{m['distro']}, kernel {m['kernel']}, {m['glibc']}"],
        ["toolchain", f"{m['rustc']}; {m['cc']}"],
        ["tools", "; ".join(f"{v}" for v in m["tools"].values())],
    ]))
    return "".join(s)


def sec_floor(f: dict) -> str:
    """bench/floor.sh: what LD_AUDIT itself costs, beside the shim."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import floor  # noqa: E402 (only when there is a floor.json)
    return ("\n## 3b. The floor: what LD_AUDIT itself costs (`bench/floor.sh`)\n\n"
            "Added to the program bare by do-nothing audit modules (`bench/c/audit_floor.c`: "
            "`la_version` alone, `la_version` and `la_symbind64`, or every callback the shim "
            "defines returning at once; linked "
            "with libc, which makes glibc load a second `libc.so.6` into the audit namespace as "
            "it does for the shim, or without), and by the shim with the launcher's environment. "
            "Instructions from callgrind (growth between two loop sizes), memory from "
            "`/proc/PID/smaps_rollup` at `memprobe`'s pause (medians of "
            f"{floor.MEM_RUNS}). For `python3 -c pass` (hash seed fixed): instructions from "
            f"callgrind, page faults from the process's rusage (medians of {floor.FAULT_RUNS}); "
            "*malloc's main arena*: whether `bench/c/heapcheck.c`'s first `malloc` grew a brk "
            "heap.\n\n" + floor.render(f) + meta_note(f))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, required=True)
    ap.add_argument("--doc", type=Path, required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--readme", type=Path,
                    help="also write the README's cost table from these results (cost.py)")
    a = ap.parse_args()
    r = {n: load(a.results, n) for n in ("events", "idle", "heavy", "floor", "startup", "memory",
                                          "calls", "report", "progress", "fleet")}
    r["gpu"] = load_gpu(a.results)
    m = load(a.results, "machine")
    if not m:
        raise SystemExit(f"{a.results}/machine.json missing: run bench/run.sh first")
    parts = [machine_section(m, a.label),
             "\n## Targets of issue 10\n\n",
             table(["target", "measured", ""], target_rows(r))]
    # Hand-written analysis kept with the figures it discusses.
    notes = a.results / "notes.md"
    if notes.exists():
        parts.append("\n" + notes.read_text())
    if r["events"]:
        parts.append("\n" + sec_events(r["events"], r["idle"]))
    if r["idle"]:
        parts.append(sec_idle(r["idle"]))
    for name, fn in (("heavy", sec_heavy), ("floor", sec_floor), ("startup", sec_startup),
                     ("memory", sec_memory),
                     ("calls", sec_calls), ("report", sec_report)):
        if r[name]:
            parts.append(fn(r[name]))
    parts.append(sec_gpu(a.results, r["gpu"]))
    if r["fleet"]:
        parts.append(sec_fleet(r["fleet"]))
    missing = [n for n, v in r.items() if not v]
    if missing:
        parts.append(f"\nNot measured in this results folder: {', '.join(missing)}.\n")
    rel = os.path.relpath(a.results.resolve(), a.doc.resolve().parent)
    parts.append(f"\nRaw outputs: [`{rel}`]({rel}) (one JSON per section, strace tables and "
                 "system-call sites under `raw/`).\n")
    a.doc.write_text("".join(parts))
    if a.readme:
        cost.write_readme(a.readme, table(["what", "cost"], cost.rows(r)))


if __name__ == "__main__":
    main()
