#!/usr/bin/env python3
"""Writes synthetic trace directories in the real format (docs/trace-format.md)
for the `report` benchmarks: deterministic, any size, fast.

  gen_trace.py single DIR --size-mb S     one process file of about S MB
  gen_trace.py many DIR --files N --total-mb S
                                          N process files totalling about S MB
  gen_trace.py cycles DIR --cycles C      one process that loads and unloads
                                          one library C times

`single` and `many` repeat the life of a PyTorch-like process with cuDNN 9
from a pip wheel, looked up the way the real dispatcher does it: for each
sub-library the versioned names `.so.9.19.0` and `.so.9.19` fail (with their
candidates) before `.so.9` loads; the engines, cuBLAS/cuBLASLt, cudart and
libcuda load; NVRTC fails and the program reads dlerror(); versions and
calls are recorded; then every library is unloaded, and the next round
loads them again (a long-lived process that reloads a plugin). Every line has
the fields the shim writes, in its order. `cycles` is exactly what the shim
writes for `dlopen(path); dlclose()` in a loop.

Lines are built from pre-serialised templates with only `seq` and `t_ns`
changing, so a gigabyte takes seconds, and the same arguments give the same
bytes.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

PIP = "/opt/venv/lib/python3.11/site-packages/nvidia"
CUDNN = f"{PIP}/cudnn/lib"
CU13 = f"{PIP}/cu13/lib"
TORCH = "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so"
DRIVER = "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
SUBLIBS = ["graph", "engines_precompiled", "engines_runtime_compiled", "heuristic", "ops", "cnn", "adv"]

J = lambda v: json.dumps(v, separators=(",", ":"))  # noqa: E731


def header(pid: int, ppid: int, exe: str, argv: list[str]) -> str:
    return J({
        "ev": "process", "v": 1, "shim": "0.1.0", "pid": pid, "ppid": ppid, "tid": pid,
        "t_ns": 1_000_000_000, "wall_ms": 1_795_500_000_000, "exe": exe, "argv": argv,
        "hostname": "bench", "cwd": "/work",
        "env": {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "CUDA_VISIBLE_DEVICES": "0"},
        "mode": "cuda", "origin": "exec", "glibc": "2.36", "preload": True,
    }) + "\n"


class Writer:
    """Event lines of one process: `emit(kind, fields)` returns a template
    whose `line(seq, t_ns)` is one full line."""

    def __init__(self, pid: int, ppid: int):
        self.common = f',"pid":{pid},"ppid":{ppid},"tid":{pid},'

    def template(self, kind: str, fields: dict) -> tuple[str, str, str, bool]:
        body = J(fields)[1:]  # without the opening brace
        # A dlerror event names the failure just before it (its `req`).
        return (f'{{"ev":"{kind}","seq":', ',"t_ns":', self.common + body + "\n", REQ in body)


REQ = '"__REQ__"'


def line(t: tuple[str, str, str, bool], seq: int, t_ns: int) -> str:
    tail = t[2].replace(REQ, str(seq - 1)) if t[3] else t[2]
    return f"{t[0]}{seq}{t[1]}{t_ns}{tail}"


def identity(path: str, n: int) -> dict:
    return {"realpath": path, "dev": 2049, "ino": 1_000_000 + n, "size": 1_000_000 + 4096 * n,
            "build_id": f"{n:08x}" * 5}


def load(name, path, reason, requester, via, mode, soname, family, tried, n, search_dir=None,
         owner=None) -> dict:
    d = {"name": name, "path": path, "reason": reason, "reason_owner": owner,
         "search_dir": search_dir, "requester": requester, "via": via, "mode": mode, "lmid": 0,
         "soname": soname}
    d.update(identity(path, n))
    d.update({"family": family, "tried": tried, "new": True})
    return d


def cand(path, reason, result):
    return {"path": path, "reason": reason, "result": result}


def round_events(w: Writer) -> list[tuple[str, str, str, bool]]:
    """Templates for one round of the PyTorch-like process (see module doc)."""
    ev = []
    disp = f"{CUDNN}/libcudnn.so.9"
    loaded = [(disp, "cudnn")] + [(f"{CUDNN}/libcudnn_{s}.so.9", "cudnn") for s in SUBLIBS] + [
        (f"{CU13}/libcudart.so.13", "cudart"), (f"{CU13}/libcublas.so.13", "cublas"),
        (f"{CU13}/libcublasLt.so.13", "cublasLt"), (DRIVER, "cuda")]
    ev.append(w.template("load", load("libcudnn.so.9", disp, "RPATH", TORCH, "needed", None,
                                      "libcudnn.so.9", "cudnn", [cand(disp, "RPATH", "used")], 1,
                                      CUDNN, TORCH)))
    ev.append(w.template("version", {"path": disp, "family": "cudnn", "source": "elf",
                                     "version": "9", "raw": None, "cuda_build": None,
                                     "max_device": None, "check": None, "core": None,
                                     "status": None, "driver_file": None}))
    for i, sub in enumerate(SUBLIBS):
        base = f"libcudnn_{sub}.so"
        for variant in (".9.19.0", ".9.19"):
            tried = [cand(f"{CUDNN}/{base}{variant}", "RUNPATH", "missing"),
                     cand(f"/usr/lib/x86_64-linux-gnu/{base}{variant}", "default-dir", "missing")]
            ev.append(w.template("load_failed", {
                "name": base + variant, "requester": disp, "via": "dlopen", "mode": 2, "lmid": 0,
                "family": "cudnn", "tried": tried, "error": None, "errno": 2}))
        path = f"{CUDNN}/{base}.9"
        ev.append(w.template("load", load(base + ".9", path, "RUNPATH", disp, "dlopen", 2,
                                          base + ".9", "cudnn", [cand(path, "RUNPATH", "used")],
                                          10 + i, CUDNN, disp)))
        if sub in ("graph", "ops", "cnn", "adv"):
            ev.append(w.template("version", {
                "path": path, "family": "cudnn", "source": "query", "version": "9.19.0",
                "raw": 91900, "cuda_build": 13000 if sub == "graph" else None,
                "max_device": 1210 if sub == "graph" else None,
                "check": None if sub == "graph" else 0,
                "core": None if sub == "graph" else f"{CUDNN}/libcudnn_graph.so.9",
                "status": None, "driver_file": None}))
    for k, (name, fam, d) in enumerate([("libcudart.so.13", "cudart", CU13),
                                        ("libcublas.so.13", "cublas", CU13),
                                        ("libcublasLt.so.13", "cublasLt", CU13)]):
        path = f"{d}/{name}"
        ev.append(w.template("load", load(name, path, "RPATH", TORCH, "needed", None, name, fam,
                                          [cand(path, "RPATH", "used")], 30 + k, d, TORCH)))
    ev.append(w.template("load", load("libcuda.so.1", DRIVER, "ld.so.cache", f"{CU13}/libcudart.so.13",
                                      "dlopen", 2, "libcuda.so.1", "cuda",
                                      [cand(DRIVER, "ld.so.cache", "used")], 40)))
    ev.append(w.template("version", {"path": DRIVER, "family": "cuda", "source": "query",
                                     "version": "13.0", "raw": 13000, "cuda_build": None,
                                     "max_device": None, "check": None, "core": None,
                                     "status": 0, "driver_file": "580.159.04"}))
    for name in ("libnvrtc.so.13", "libnvrtc.so"):
        ev.append(w.template("load_failed", {
            "name": name, "requester": f"{CUDNN}/libcudnn_graph.so.9", "via": "dlopen", "mode": 2,
            "lmid": 0, "family": "nvrtc",
            "tried": [cand(f"{CUDNN}/{name}", "RUNPATH", "missing")],
            "error": None, "errno": 2}))
        ev.append(w.template("dlerror", {"req": "__REQ__", "error": f"{name}: cannot open shared object "
                                         "file: No such file or directory"}))
    for fn, val in (("cudnnGetVersion", 91900), ("cudnnCreate", None), ("cuInit", None)):
        ev.append(w.template("call", {"fn": fn, "lib": disp if fn != "cuInit" else DRIVER, "n": 1,
                                      "via": "plt" if fn != "cuInit" else "dlsym",
                                      "status": None if val else 0, "value": val, "prop": None,
                                      "dur_ns": None if val else 120_000}))
    # Everything leaves again (a plugin unloaded), so each round maps anew.
    for path, fam in reversed(loaded):
        ev.append(w.template("unload", {"path": path, "lmid": 0, "family": fam}))
    return ev


def write_process(path: Path, pid: int, ppid: int, size: int, templates_of) -> int:
    """Writes one process file of about `size` bytes; returns its size."""
    w = Writer(pid, ppid)
    templates = templates_of(w)
    seq, t = 0, 1_000_000_000
    with open(path, "w", buffering=1 << 20) as f:
        written = f.write(header(pid, ppid, "/usr/bin/python3.11", ["python3", "train.py"]))
        while written < size:
            chunk = []
            for tpl in templates:
                seq += 1
                t += 25_000
                chunk.append(line(tpl, seq, t))
            written += f.write("".join(chunk))
    return written


def single(out: Path, size_mb: float) -> None:
    write_process(out / "4242.jsonl", 4242, 4200, int(size_mb * 2**20), round_events)


def many(out: Path, files: int, total_mb: float) -> None:
    each = int(total_mb * 2**20 / files)
    for i in range(files):
        pid = 100_000 + i
        write_process(out / f"{pid}.jsonl", pid, 99_999, each, round_events)


def cycles(out: Path, n: int) -> None:
    """What the shim writes for dlloop (bench/c/dlloop.c) on one cuDNN file."""
    path = f"{CUDNN}/libcudnn_graph.so.9"
    prog = "/work/bench/dlloop"
    w = Writer(4242, 4200)
    ld = w.template("load", load(path, path, "path", prog, "dlopen", 2, "libcudnn_graph.so.9",
                                 "cudnn", [], 1))
    ul = w.template("unload", {"path": path, "lmid": 0, "family": "cudnn"})
    seq, t = 0, 1_000_000_000
    with open(out / "4242.jsonl", "w", buffering=1 << 20) as f:
        f.write(header(4242, 4200, prog, ["dlloop", path, str(n)]))
        for start in range(0, n, 10_000):
            chunk = []
            for _ in range(min(10_000, n - start)):
                for tpl in (ld, ul):
                    seq += 1
                    t += 20_000
                    chunk.append(line(tpl, seq, t))
            f.write("".join(chunk))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="kind", required=True)
    s = sub.add_parser("single")
    s.add_argument("dir", type=Path)
    s.add_argument("--size-mb", type=float, required=True)
    m = sub.add_parser("many")
    m.add_argument("dir", type=Path)
    m.add_argument("--files", type=int, required=True)
    m.add_argument("--total-mb", type=float, required=True)
    c = sub.add_parser("cycles")
    c.add_argument("dir", type=Path)
    c.add_argument("--cycles", type=int, required=True)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    if any(a.dir.iterdir()):
        ap.error(f"{a.dir} is not empty")
    if a.kind == "single":
        single(a.dir, a.size_mb)
    elif a.kind == "many":
        many(a.dir, a.files, a.total_mb)
    else:
        cycles(a.dir, a.cycles)


if __name__ == "__main__":
    main()
