#!/usr/bin/env python3
"""The floor of LD_AUDIT (bench/floor.sh): instructions and memory of a
program bare, under do-nothing audit modules, and under the shim, so that the
shim's figures split into what glibc's audit machinery costs any module of
the same shape and what the shim adds. Counts only (callgrind, smaps, page
faults): they do not depend on the load of the machine."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402
import suite  # noqa: E402

CYCLES = (100, 600)
HEAVY = (1000, 2000, 6000)  # libraries, then re-opens at two sizes
MEM_RUNS = 5
FAULT_RUNS = 7
# Python's hash seed fixed, so that its instruction count repeats exactly.
PY_ENV = {"PYTHONHASHSEED": "0"}


def variants(build: Path, shim_env: dict, trace_dir: str) -> dict[str, dict]:
    """Name → environment. `shim` is the launcher's, trace directory included."""
    return {
        "bare": {},
        "floor-version-nolibc": {"LD_AUDIT": str(build / "floor-version-nolibc.so")},
        "floor-callbacks-nolibc": {"LD_AUDIT": str(build / "floor-callbacks-nolibc.so")},
        "floor-version": {"LD_AUDIT": str(build / "floor-version.so")},
        "floor-symbind": {"LD_AUDIT": str(build / "floor-symbind.so")},
        "floor-callbacks": {"LD_AUDIT": str(build / "floor-callbacks.so")},
        "shim": dict(shim_env, CUDNN_TRACE_DIR=trace_dir),
    }


def per_cycle(argv_of, env: dict, sizes: tuple[int, int]) -> float:
    """Instructions per unit of work: growth between two sizes."""
    a, b = (bl.callgrind_instructions(argv_of(n), env) for n in sizes)
    return (b - a) / (sizes[1] - sizes[0])


def minor_faults(argv: list[str], env: dict) -> int:
    """Page faults of the program (what it touched for the first time), the
    median of a few runs."""
    cmd = bl.Cmd("faults", argv, env, stdout="null")
    return int(bl.stats([bl.run_once(cmd).minflt for _ in range(FAULT_RUNS)])["median"])


def brk_heap(build: Path, env: dict) -> bool:
    """Whether malloc's main arena grows a brk heap (bench/c/heapcheck.c)."""
    out = subprocess.run([str(build / "heapcheck")], env=bl.clean_env(env),
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    return "heap=1" in out


def python_start(python: str, env: dict) -> dict:
    """`python3 -c pass`: instructions (callgrind) and page faults."""
    argv = [python, "-c", "pass"]
    env = dict(env, **PY_ENV)
    return {"py_instructions": bl.callgrind_instructions(argv, env),
            "py_faults": minor_faults(argv, env)}


def heavy_libs(build: Path, n: int) -> Path:
    d = build / f"heavy-{n}"
    if not (d / f"libcublas_bench_{n - 1:04d}.so").exists():
        d.mkdir(parents=True, exist_ok=True)
        tpl = (build / "lib" / "libcublas_bench_XXXX.so").read_bytes()
        for i in range(n):
            (d / f"libcublas_bench_{i:04d}.so").write_bytes(tpl.replace(b"XXXX", b"%04d" % i))
    return d


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", type=Path, required=True)
    ap.add_argument("--cli", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    b = a.build
    shim_env = suite.launcher_env(a.cli)
    nlibs, re1, re2 = HEAVY
    libs = heavy_libs(b, nlibs)
    python = suite.real_python()
    res: dict = {"_meta": {"command": "bench/floor.sh", "mode": "floor", "cycles": CYCLES,
                           "heavy": HEAVY, "loadavg_before": suite.loadavg()}}
    t0 = time.time()
    with tempfile.TemporaryDirectory() as t:
        for name, env in variants(b, shim_env, t).items():
            suite.log(f"floor: {name}")
            row: dict = {}
            for kind, lib in (("plain", "libplain_bench.so"), ("cuda", "libcublas_bench.so")):
                row[f"cycle_{kind}"] = per_cycle(
                    lambda n, lib=lib: [str(b / "dlloop"), str(b / "lib" / lib), str(n)],
                    env, CYCLES)
            row["reopen"] = per_cycle(
                lambda n: [str(b / "dlheavy"), str(libs), str(nlibs), str(n)], env, (re1, re2))
            row["heavy_opens"] = bl.callgrind_instructions(
                [str(b / "dlheavy"), str(libs), str(nlibs), "0"], env)
            mem = [suite.probe_memory([str(b / "memprobe")], env) for _ in range(MEM_RUNS)]
            row["memory"] = {k: bl.stats([m[k] for m in mem])["median"] for k in mem[0]}
            row.update(python_start(python, env))
            row["brk_heap"] = brk_heap(b, env)
            res[name] = row
    base = res["bare"]
    for name in list(res):
        if name.startswith("_") or name == "bare":
            continue
        r = res[name]
        r["added"] = {
            "cycle_plain": r["cycle_plain"] - base["cycle_plain"],
            "cycle_cuda": r["cycle_cuda"] - base["cycle_cuda"],
            "reopen": r["reopen"] - base["reopen"],
            "heavy_opens": r["heavy_opens"] - base["heavy_opens"],
            **{k: r[k] - base[k] for k in ("py_instructions", "py_faults") if k in r},
            **{k: r["memory"][k] - base["memory"][k] for k in base["memory"]},
        }
    res["_meta"]["seconds"] = round(time.time() - t0, 1)
    res["_meta"]["loadavg_after"] = suite.loadavg()
    (a.out / "floor.json").write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
    print(render(res))


ORDER = ["floor-version-nolibc", "floor-callbacks-nolibc", "floor-version", "floor-symbind",
         "floor-callbacks", "shim"]


def render(res: dict) -> str:
    rows = ["| | per dlopen+dlclose, plain | per dlopen+dlclose, CUDA-named (2 events) "
            "| per re-open among 1,000 | 1,000 opens | RSS | private |",
            "|---|---|---|---|---|---|---|"]
    for name in [n for n in ORDER if n in res]:
        d = res[name]["added"]
        rows.append(f"| {name} | {d['cycle_plain']:+,.0f} | {d['cycle_cuda']:+,.0f} "
                    f"| {d['reopen']:+,.0f} | {d['heavy_opens'] / 1e6:+,.1f} M "
                    f"| {d['rss_kb'] / 1024:+.2f} MB | {d['private_kb'] / 1024:+.2f} MB |")
    b = res["bare"]
    rows.append(f"| bare (absolute) | {b['cycle_plain']:,.0f} | {b['cycle_cuda']:,.0f} "
                f"| {b['reopen']:,.0f} | {b['heavy_opens'] / 1e6:,.1f} M "
                f"| {b['memory']['rss_kb'] / 1024:.2f} MB | {b['memory']['private_kb'] / 1024:.2f} MB |")
    return "\n".join(rows) + "\n" + render_start(res)


def render_start(res: dict) -> str:
    """The start of a program: `python3 -c pass`, and malloc's heap."""
    if "py_instructions" not in res.get("bare", {}):
        return ""
    rows = ["", "| | `python3 -c pass`: instructions | page faults | malloc's main arena |",
            "|---|---|---|---|"]
    arena = lambda r: "brk heap" if r["brk_heap"] else "**mmap chunks, no brk heap**"  # noqa: E731
    for name in [n for n in ORDER if n in res]:
        r, d = res[name], res[name]["added"]
        rows.append(f"| {name} | {d['py_instructions'] / 1e6:+,.2f} M | {d['py_faults']:+,} "
                    f"| {arena(r)} |")
    b = res["bare"]
    rows.append(f"| bare (absolute) | {b['py_instructions'] / 1e6:,.2f} M | {b['py_faults']:,} "
                f"| {arena(b)} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    main()
