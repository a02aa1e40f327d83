"""The README's cost table, written from the suite's results
(`render.py --readme`): each row from the section of docs/benchmarks.md that
measures it, so that the README shows the figures of record and cannot drift
from the page. The notes under the table in the README are hand-written;
only the text between the two markers is replaced."""

from __future__ import annotations

from pathlib import Path

BEGIN = ("<!-- cost table: written by `python3 bench/tools/render.py --readme README.md` from "
         "the results behind docs/benchmarks.md; edit those, not this -->")
END = "<!-- end of cost table -->"


def events_row(ev: dict) -> list[str]:
    per = ev["syscalls_per_event"]
    calls = ", ".join(f"{v:g} `{k}`" for k, v in sorted(per.items(), key=lambda kv: -kv[1]))
    return ["a recorded event: a CUDA-family library loaded or unloaded (§1)",
            f"{ev['syscalls_per_event_total']:.1f} system calls on average, the `write` included "
            f"({calls}); {ev['instructions']['added_per_event']:,.0f} instructions, "
            f"{ev['time']['added_us_per_event']['median']:.1f} µs"]


def idle_row(idle: dict, floor: dict | None) -> list[str]:
    n = idle["syscalls_per_cycle_total"]
    what = (f"{'no system call' if n == 0 else f'{n:g} system calls'}; "
            f"{idle['instructions']['added_per_cycle']:,.0f} instructions, "
            f"{idle['time']['added_us_per_cycle']['median']:.1f} µs")
    if floor and "floor-callbacks" in floor:
        what += (f" (a do-nothing audit module: "
                 f"{floor['floor-callbacks']['added']['cycle_plain']:+,.0f} instructions, §3b)")
    return ["a library outside the CUDA family loaded and unloaded, no event (§2)", what]


def heavy_row(h: dict) -> list[str]:
    w, ins = h["ratios_wall"], h["instructions"]
    paired = w.get("traced/bare paired")
    lt = h.get("ltrace", {}).get("extrapolated_ratio")
    what = (f"traced/bare {w['traced/bare']:.3f} in wall time"
            + (f" ({paired:.3f} round by round)" if paired else "")
            + f", {ins['ratio']:.3f} in instructions ({ins['per_reopen']['Ir']['added']:,.0f} "
            f"per re-open, which costs the loader {ins['per_reopen']['Ir']['bare']:,.0f}); "
            f"`LD_DEBUG=libs,files` {w['ld_debug/bare']:.2f}× bare, "
            f"`strace -f -e trace=openat` {w['strace_openat/bare']:.2f}×"
            + (f", `ltrace -f -e dlopen` about {lt:,.0f}× (extrapolated)" if lt else ""))
    return [f"{h['nlibs']:,} CUDA libraries loaded, then {h['nreopen']:,} re-opens (§3)", what]


def python_floor(floor: dict | None) -> str:
    """What the shim adds to Python's start by count, and glibc's part of it
    (a do-nothing module with the shim's callbacks)."""
    if not floor or "py_instructions" not in floor.get("shim", {}).get("added", {}):
        return ""
    s, g = floor["shim"]["added"], floor["floor-callbacks"]["added"]
    return (f"; in Python's start {s['py_instructions'] / 1e6:+.2f} M instructions and "
            f"{s['py_faults']:+,} page faults, of which {g['py_instructions'] / 1e6:.2f} M and "
            f"{g['py_faults']:,} are glibc's for any audit module with the same callbacks (§3b)")


def shim_start_row(st: dict, floor: dict | None) -> list[str]:
    c = st["true_counts"]
    return ["the start of a process, the shim alone (§4)",
            f"`/bin/true` {st['true_shim_added_ms']:+.2f} ms "
            f"({(c['instructions']['shim'] - c['instructions']['bare']) / 1e6:+.2f} M "
            f"instructions, {c['syscalls']['shim'] - c['syscalls']['bare']:+d} system calls); "
            f"`python3 -c pass` {st['python_shim_added_ms']:+.2f} ms "
            f"({st['python_shim_added_pct']:+.1f} %)" + python_floor(floor)]


def launcher_row(st: dict) -> list[str]:
    c = st["true_counts"]
    f, t = st.get("true_floor_added_ms"), st.get("true_tty_added_ms")
    what = f"`/bin/true` {st['true_launcher_added_ms']:+.2f} ms"
    if f is not None:
        what += f" (a do-nothing launcher process with the shim: {f:+.2f})"
    if t is not None:
        what += f", in a terminal {t:+.2f} ms"
    what += (f"; `python3 -c pass` {st['python_launcher_added_ms']:+.2f} ms "
             f"({st['python_launcher_added_pct']:+.1f} %); the launcher process "
             f"{c['instructions']['launcher_process'] / 1e6:.2f} M instructions, "
             f"{c['syscalls']['launcher'] - c['syscalls']['shim']} system calls")
    return ["the launcher around a program, `cudnn-trace -- PROGRAM` (§4)", what]


def memory_row(mem: dict) -> list[str]:
    a = mem["shim_added"]
    return ["memory of a small program (§5)",
            f"{a['rss_kb'] / 1024:+.2f} MB RSS, {a['private_kb'] / 1024:+.2f} MB private, "
            f"{a['threads']:+d} threads"]


def calls_row(calls: dict) -> list[str]:
    p, d = calls["plt"], calls["dlsym"]
    return ["a wrapped cuDNN/CUDA call (§6)",
            f"{p['instructions']['added_per_call']:.0f} instructions, "
            f"{p['added_ns']['median']:+.1f} ns through the PLT, "
            f"{d['added_ns']['median']:+.1f} ns through `dlsym`; no system call"]


def report_case(rep: dict, group: str) -> dict | None:
    """The largest case of a group that ran, in both formats."""
    ran = [c for c in rep["groups"].get(group, []) if "text" in c and "json" in c]
    return max(ran, key=lambda c: c["mb"]) if ran else None


def report_row(rep: dict) -> list[str]:
    parts = []
    for group in ("single", "many"):
        c = report_case(rep, group)
        if c:
            rss = max(c[f]["maxrss_mb"]["median"] for f in ("text", "json"))
            parts.append(f"{c['case']}: {rss:,.0f} MB peak RSS, {c['text']['mb_per_s']:,.0f} "
                         f"MB/s ({c['json']['mb_per_s']:,.0f} with `--json`)")
    return ["`cudnn-trace report` (§7)", "; ".join(parts)]


def gpu_ratios(gpu: dict) -> tuple[dict, dict] | None:
    """`bench/gpu.sh`'s PyTorch results (`gpu/torch_conv.json`) and their
    ratios of medians to bare, by (wall_s | cpu_s, shim | traced); None
    when the results folder has none."""
    t = gpu.get("torch_conv")
    if not t or "cpu_s" not in t:
        return None
    return t, {(k, s): t[k][s]["median"] / t[k]["bare"]["median"]
               for k in ("wall_s", "cpu_s") for s in ("shim", "traced")}


def gpu_row(gpu: dict) -> list[str] | None:
    got = gpu_ratios(gpu)
    if not got:
        return None
    t, r = got
    return ["PyTorch import and one convolution on the GPU machine (§8)",
            f"the launcher {r['wall_s', 'traced']:.3f}× bare in wall time, "
            f"{r['cpu_s', 'traced']:.3f}× in CPU time; the shim alone {r['wall_s', 'shim']:.3f}× "
            f"and {r['cpu_s', 'shim']:.3f}× (medians of {t['runs']} interleaved rounds)"]


def rows(r: dict) -> list[list[str]]:
    """The table's rows, from the results that are there."""
    out = []
    if r.get("events"):
        out.append(events_row(r["events"]))
    if r.get("idle"):
        out.append(idle_row(r["idle"], r.get("floor")))
    if r.get("heavy"):
        out.append(heavy_row(r["heavy"]))
    if r.get("startup"):
        out += [shim_start_row(r["startup"], r.get("floor")), launcher_row(r["startup"])]
    if r.get("memory"):
        out.append(memory_row(r["memory"]))
    if r.get("calls"):
        out.append(calls_row(r["calls"]))
    if r.get("report"):
        out.append(report_row(r["report"]))
    g = gpu_row(r.get("gpu") or {})
    if g:
        out.append(g)
    return out


def write_readme(readme: Path, table_md: str) -> None:
    """Replace what lies between the markers; the markers must be there."""
    text = readme.read_text()
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{readme}: the cost table's markers are missing ({BEGIN!r} … {END!r})")
    readme.write_text(text[:start] + BEGIN + "\n\n" + table_md + "\n" + text[end:])
