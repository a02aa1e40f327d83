#!/usr/bin/env python3
"""Interleaved comparison of whole commands, wall time and CPU time, for use
outside the suite (bench/gpu.sh):

  compare.py [--runs N] [--warmup N] [--json FILE] [--progress] :: NAME CMD [ARGS...] :: NAME CMD ...

Each round runs every command once, starting one further along each round.
`{tmp}` in a command becomes a fresh directory per run (a trace directory).
Prints median, min and max per command and the ratio of medians to the first,
for wall time and for CPU time (user + system, from wait4: the command and
every descendant it waited for). CPU time is the steadier figure where one
side's wall time varies by more than the difference sought (a GPU program's
start-up); a program that busy-waits on a device counts that wait in both.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib as bl  # noqa: E402


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[bl.Cmd]]:
    chunks = bl.split_commands(argv)
    ap = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1].strip())
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--progress", action="store_true", help="a line per round on stderr")
    opts = ap.parse_args(chunks[0])
    cmds = [bl.Cmd(c[0], c[1:], stdout="null") for c in chunks[1:] if c]
    if len(cmds) < 2 or any(len(c.argv) == 0 for c in cmds):
        ap.error("give at least two ':: NAME CMD' commands")
    return opts, cmds


def main() -> None:
    opts, cmds = parse(sys.argv[1:])
    progress = (lambda m: print(m, file=sys.stderr, flush=True)) if opts.progress else None
    s = bl.interleave(cmds, opts.runs, opts.warmup, log=progress)
    wall = {c.name: bl.wall_stats(s[c.name]) for c in cmds}
    cpu = {c.name: bl.stats([x.user_s + x.sys_s for x in s[c.name]]) for c in cmds}
    print(f"{'command':<12} {'median s':>10} {'min s':>10} {'max s':>10} {'ratio':>7}   "
          f"{'cpu med s':>10} {'cpu min':>9} {'cpu max':>9} {'ratio':>7}   (n={opts.runs})")
    wbase, cbase = wall[cmds[0].name]["median"], cpu[cmds[0].name]["median"]
    for c in cmds:
        w, u = wall[c.name], cpu[c.name]
        print(f"{c.name:<12} {w['median']:>10.3f} {w['min']:>10.3f} {w['max']:>10.3f} "
              f"{w['median'] / wbase:>7.3f}   {u['median']:>10.3f} {u['min']:>9.3f} "
              f"{u['max']:>9.3f} {u['median'] / cbase:>7.3f}")
    if opts.json:
        per_run = {c.name: [{"wall_s": x.wall_s, "user_s": x.user_s, "sys_s": x.sys_s}
                            for x in s[c.name]] for c in cmds}
        opts.json.write_text(json.dumps({"runs": opts.runs, "wall_s": wall, "cpu_s": cpu,
                                         "per_run": per_run,
                                         "argv": {c.name: c.argv for c in cmds}}, indent=1) + "\n")


if __name__ == "__main__":
    main()
