#!/usr/bin/env python3
"""Interleaved comparison of whole commands, wall time and CPU time, for use
outside the suite (bench/gpu.sh):

  compare.py [--runs N] [--warmup N] [--json FILE] [--progress] [--terminal] :: NAME [VAR=VALUE...] CMD [ARGS...] :: NAME ...

Each round runs every command once, starting one further along each round.
`{tmp}` in a command becomes a fresh directory per run (a trace directory).
Words of the form VAR=VALUE before CMD go into its environment, as in the
shell: unlike `env VAR=VALUE CMD`, no further program is run before CMD,
whose cost would count as CMD's.
Prints median, min and max per command, the ratio of medians to the first and
the median of the per-round differences to the first (paired), for wall time,
and median, min, max and ratio for CPU time (user + system, from wait4: the command and
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
    ap.add_argument("--terminal", action="store_true",
                    help="each run on a new pty, the controlling terminal of its own session, as in a "
                         "user's shell (benchlib.run_in_terminal), not on /dev/null and a file")
    ap.add_argument("--keep-tmp", action="store_true",
                    help="remove the {tmp} directories after the last round, not after each run "
                         "(benchlib.Cmd.keep_tmp says why)")
    opts = ap.parse_args(chunks[0])
    cmds = [command(c[0], c[1:], opts.keep_tmp, opts.terminal) for c in chunks[1:] if c]
    if len(cmds) < 2 or any(len(c.argv) == 0 for c in cmds):
        ap.error("give at least two ':: NAME CMD' commands")
    return opts, cmds


def command(name: str, words: list[str], keep_tmp: bool, terminal: bool) -> bl.Cmd:
    """NAME [VAR=VALUE...] CMD ARGS: the leading assignments are CMD's environment."""
    env, argv = bl.split_env(words)
    return bl.Cmd(name, argv, env, stdout="null", keep_tmp=keep_tmp, terminal=terminal)


def main() -> None:
    opts, cmds = parse(sys.argv[1:])
    progress = (lambda m: print(m, file=sys.stderr, flush=True)) if opts.progress else None
    s = bl.interleave(cmds, opts.runs, opts.warmup, log=progress)
    wall = {c.name: bl.wall_stats(s[c.name]) for c in cmds}
    cpu = {c.name: bl.stats([x.cpu_s for x in s[c.name]]) for c in cmds}
    paired = {c.name: paired_diff(s[c.name], s[cmds[0].name]) for c in cmds}
    print_table(cmds, wall, cpu, paired, opts.runs)
    if opts.json:
        per_run = {c.name: [{"wall_s": x.wall_s, "user_s": x.user_s, "sys_s": x.sys_s}
                            for x in s[c.name]] for c in cmds}
        opts.json.write_text(json.dumps({"runs": opts.runs, "wall_s": wall, "cpu_s": cpu,
                                         "paired_wall_diff_s": paired,
                                         "per_run": per_run,
                                         "argv": {c.name: c.argv for c in cmds}}, indent=1) + "\n")


def paired_diff(runs: list, base: list) -> dict:
    """Median, min and max over rounds of this command's wall time minus
    the first command's in the same round: the round's own conditions
    (the machine's speed, a GPU's state) cancel out, which the difference
    of two medians does not do."""
    return bl.stats([a.wall_s - b.wall_s for a, b in zip(runs, base)])


def print_table(cmds: list, wall: dict, cpu: dict, paired: dict, runs: int) -> None:
    """Seconds, or milliseconds when the first command takes under one
    (a start-up measured in seconds to three places shows nothing)."""
    scale, unit = (1e3, "ms") if wall[cmds[0].name]["median"] < 1 else (1.0, "s")
    print(f"{'command':<12} {'median ' + unit:>10} {'min ' + unit:>10} {'max ' + unit:>10} "
          f"{'ratio':>7} {'paired +' + unit:>11}   {'cpu med ' + unit:>11} {'cpu min':>9} "
          f"{'cpu max':>9} {'ratio':>7}   (n={runs})")
    wbase, cbase = wall[cmds[0].name]["median"], cpu[cmds[0].name]["median"]
    for c in cmds:
        w, u, d = wall[c.name], cpu[c.name], paired[c.name]
        print(f"{c.name:<12} {w['median'] * scale:>10.3f} {w['min'] * scale:>10.3f} "
              f"{w['max'] * scale:>10.3f} {w['median'] / wbase:>7.3f} {d['median'] * scale:>11.3f}   "
              f"{u['median'] * scale:>11.3f} {u['min'] * scale:>9.3f} {u['max'] * scale:>9.3f} "
              f"{u['median'] / cbase:>7.3f}")


if __name__ == "__main__":
    main()
