#!/usr/bin/env python3
"""Writes a synthetic fleet for the `report --fleet` benchmark (issue 13): one
run directory per rank, as `srun cudnn-trace --out /shared/traces/%h-%p` leaves
them, each holding the traces of one rank's process tree in the real format
(docs/trace-format.md), deterministic.

  gen_fleet.py DIR [--ranks 1000] [--procs 50] [--ranks-per-host 8] [--odd 137,842]

Per rank: the trainer (`python train.py`, RANK/LOCAL_RANK set; one round of
gen_trace.py's PyTorch-like life: cuDNN 9.19 sub-libraries with the versioned
names failing first, cuBLAS, cudart, libcuda, NVRTC failing, versions, calls),
8 forked DataLoader workers (a header, nothing loaded), and compile workers
(`python -m torch._inductor.compile_worker`) that load libcuda and cudart, up to
--procs processes. The odd ranks load libcudnn_graph from
/usr/lib/x86_64-linux-gnu (the system's 9.14) instead of the wheel.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_trace as gt  # noqa: E402

ODD_GRAPH = "/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9.14.0"


def header(pid, ppid, argv, host, rank, local, origin="exec") -> str:
    return gt.J({
        "ev": "process", "lost": 0, "lost_errno": 0, "v": 1, "shim": "0.1.0", "pid": pid,
        "ppid": ppid, "tid": pid, "t_ns": 1_000_000_000 + pid, "wall_ms": 1_795_500_000_000,
        "exe": "/usr/bin/python3.11", "argv": argv, "hostname": host, "cwd": "/work",
        "env": {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "CUDA_VISIBLE_DEVICES": str(local),
                "RANK": str(rank), "LOCAL_RANK": str(local), "WORLD_SIZE": "1000"},
        "mode": "cuda", "origin": origin, "glibc": "2.36", "preload": True,
    }) + "\n"


def events(pid: int, ppid: int, templates_of) -> str:
    w = gt.Writer(pid, ppid)
    out, t = [], 1_000_000_000 + pid
    for seq, tpl in enumerate(templates_of(w), 1):
        t += 25_000
        out.append(gt.line(tpl, seq, t))
    return "".join(out)


def worker_events(w: gt.Writer):
    """A compile worker: cudart and libcuda."""
    rt = f"{gt.CU13}/libcudart.so.13"
    return [
        w.template("load", gt.load("libcudart.so.13", rt, "RPATH", gt.TORCH, "needed", None,
                                   "libcudart.so.13", "cudart", [gt.cand(rt, "RPATH", "used")],
                                   30, gt.CU13, gt.TORCH)),
        w.template("load", gt.load("libcuda.so.1", gt.DRIVER, "ld.so.cache", rt, "dlopen", 2,
                                   "libcuda.so.1", "cuda",
                                   [gt.cand(gt.DRIVER, "ld.so.cache", "used")], 40)),
    ]


def rank_run(d: Path, rank: int, procs: int, per_host: int, odd: bool) -> None:
    host, local = f"node{rank // per_host:04d}", rank % per_host
    base = 10_000 + local * 1000
    d.mkdir(parents=True)
    argv = ["python3", "train.py", "--epochs", "90"]
    main = header(base, base - 1, argv, host, rank, local) + events(base, base - 1, gt.round_events)
    if odd:
        # Another file: its own path, build-id and version.
        graph_id = "0000000a" * 5
        lines = []
        for ln in main.replace(f"{gt.CUDNN}/libcudnn_graph.so.9", ODD_GRAPH).splitlines(True):
            if f'"path":"{ODD_GRAPH}"' in ln:
                ln = ln.replace(graph_id, "914000aa" * 5)
                if '"ev":"version"' in ln:
                    ln = ln.replace('"9.19.0"', '"9.14.0"').replace("91900", "91400")
            lines.append(ln)
        main = "".join(lines)
    (d / f"{base}.jsonl").write_text(main)
    n = 1
    for k in range(min(8, procs - n)):
        pid = base + 1 + k
        (d / f"{pid}.jsonl").write_text(header(pid, base, argv, host, rank, local, "fork"))
        n += 1
    k = 0
    while n < procs:
        pid = base + 100 + k
        wargv = ["python3", "-m", "torch._inductor.compile_worker", "--workers=4"]
        (d / f"{pid}.jsonl").write_text(header(pid, base, wargv, host, rank, local)
                                        + events(pid, base, worker_events))
        n += 1
        k += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--ranks", type=int, default=1000)
    ap.add_argument("--procs", type=int, default=50)
    ap.add_argument("--ranks-per-host", type=int, default=8)
    ap.add_argument("--odd", default="137,842")
    a = ap.parse_args()
    odd = {int(x) for x in a.odd.split(",") if x}
    a.dir.mkdir(parents=True, exist_ok=True)
    if any(a.dir.iterdir()):
        ap.error(f"{a.dir} is not empty")
    for r in range(a.ranks):
        host = f"node{r // a.ranks_per_host:04d}"
        rank_run(a.dir / f"{host}-{20_000 + r}", r, a.procs, a.ranks_per_host, r in odd)


if __name__ == "__main__":
    main()
