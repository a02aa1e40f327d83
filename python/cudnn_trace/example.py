"""``python -m cudnn_trace.example [--dir DIR] [--no-trace]``: the bundled example.

The cuDNN mix-up that breaks PyTorch installs, reproduced with fake libraries
(no GPU needed) and shown by the installed ``cudnn-trace``: the repository's
``examples/cudnn-mixup/run.sh``, run with this installation's binary instead
of a cargo build. The fake cuDNN, CUDA runtime and driver are compiled from C
on the spot, so it needs a C compiler (``cc``, or ``CC``) and ``bash``.

The example's sources are copied to DIR (default ``./cudnn-trace-example``)
and everything it builds and traces goes under ``DIR/target/example``, where
the traces stay for ``cudnn-trace report``.
"""

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

from ._binary import BIN_ENV, BinaryNotFound, binary, launch_environment

#: Marks a directory this module made, the only kind it writes into when
#: the directory is not empty.
MARKER = ".cudnn-trace-example"

_SOURCES = Path(__file__).resolve().parent / "_example"
_SCRIPT = Path("examples", "cudnn-mixup", "run.sh")


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cudnn_trace.example",
        description="Run cudnn-trace's bundled example: a cuDNN mix-up made with fake libraries "
        "(needs a C compiler, no GPU).",
    )
    parser.add_argument(
        "--dir",
        default="cudnn-trace-example",
        help="where to copy the example and keep its build and traces (default: %(default)s)",
    )
    parser.add_argument(
        "--no-trace",
        action="store_true",
        help="run the program without cudnn-trace and show the loader's own account (LD_DEBUG=libs)",
    )
    args = parser.parse_args(argv)

    problem = _missing_tools()
    if problem:
        sys.stderr.write("cudnn_trace.example: {}\n".format(problem))
        return 1
    env = launch_environment()
    if not args.no_trace:
        try:
            env[BIN_ENV] = binary()
        except BinaryNotFound as e:
            sys.stderr.write("cudnn_trace.example: {}\n".format(e))
            return 1
    try:
        dest = _copy_sources(Path(args.dir))
    except OSError as e:
        sys.stderr.write("cudnn_trace.example: {}\n".format(e))
        return 1
    print("cudnn_trace.example: the example is in {}".format(dest), flush=True)
    cmd = ["bash", str(dest / _SCRIPT)] + (["--no-trace"] if args.no_trace else [])
    status = subprocess.call(cmd, env=env)
    if status == 0 and not args.no_trace:
        print(
            "Its traces stay in {}: e.g. cudnn-trace report {}".format(
                dest / "target" / "example", dest / "target" / "example" / "trace"
            )
        )
    return status


def _missing_tools() -> Optional[str]:
    if shutil.which("bash") is None:
        return "the example needs bash"
    cc = os.environ.get("CC", "cc").split()
    if not cc or shutil.which(cc[0]) is None:
        return (
            "the example compiles fake cuDNN libraries from C and needs a C compiler: "
            "{} was not found (install gcc, e.g. `apt-get install gcc`, or set CC)".format(cc[0] if cc else "CC")
        )
    return None


def _copy_sources(dest: Path) -> Path:
    """Copies the example's sources into ``dest`` (absolute path returned).
    Refuses a directory that is not empty unless this module made it."""
    dest = dest.resolve()
    if dest.exists():
        if not dest.is_dir():
            raise OSError("{}: not a directory".format(dest))
        if any(dest.iterdir()) and not (dest / MARKER).exists():
            raise OSError(
                "{}: the directory is not empty and not an earlier copy of the example; "
                "choose another with --dir".format(dest)
            )
    if not (_SOURCES / _SCRIPT).is_file():
        raise OSError("this installation has no example sources ({} is missing)".format(_SOURCES / _SCRIPT))
    dest.mkdir(parents=True, exist_ok=True)
    (dest / MARKER).write_text("made by python -m cudnn_trace.example\n")
    for src in sorted(_SOURCES.rglob("*")):
        if src.is_file() and "__pycache__" not in src.parts:
            to = dest / src.relative_to(_SOURCES)
            to.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(str(src), str(to))
            if src.suffix == ".sh":
                to.chmod(0o755)
    return dest


if __name__ == "__main__":
    sys.exit(main())
