"""cudnn-trace from Python: which cuDNN and CUDA libraries a program really
loaded, why, and from where.

The package carries the ``cudnn-trace`` command (on the environment's
``PATH``; ``python -m cudnn_trace`` runs the same) and this small module, for
notebooks and test suites::

    import cudnn_trace
    doc = cudnn_trace.report("cudnn-trace-out/20261121-045901-12345")
    for finding in doc["findings"]:
        print(finding["severity"], finding["code"], finding["title"])

``report`` returns the document of ``cudnn-trace report --json`` (described in
the project's ``docs/output.md``) as plain dicts and lists, read by the same
binary, so Python and the command line can never disagree.
"""

import json
import os
import subprocess
from typing import Any, Dict, Iterable, List, Mapping, Optional, Union

from ._binary import BIN_ENV, BinaryNotFound, binary

__all__ = ["BIN_ENV", "BinaryNotFound", "ReportError", "binary", "report", "__version__"]

PathLike = Union[str, "os.PathLike[str]"]


def _version() -> str:
    try:
        from importlib.metadata import version
    except ImportError:  # pragma: no cover (Python < 3.8)
        return "unknown"
    try:
        return version("cudnn-trace")
    except Exception:  # not installed (the source tree on sys.path)
        return "unknown"


__version__ = _version()


class ReportError(RuntimeError):
    """``cudnn-trace report`` could not read the traces (or was called wrongly).

    ``returncode`` is the command's exit status, ``stderr`` what it said.
    """

    def __init__(self, message: str, returncode: int, stderr: str) -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


def report(
    *paths: PathLike,
    all: bool = False,
    ignore: Iterable[str] = (),
    severity: Optional[Mapping[str, str]] = None,
    config: Union[PathLike, bool, None] = None,
) -> Dict[str, Any]:
    """The report on the traces at ``paths`` (run directories or trace files),
    as ``cudnn-trace report --json PATH...`` prints it, parsed.

    With no path, the newest run in ``./cudnn-trace-out``, as the command.
    ``all``: also the libraries outside the CUDA family (``--all``).
    ``ignore``: codes to leave out (``--ignore``); ``severity``: code to level,
    e.g. ``{"CDT005": "info"}`` (``--severity``); ``config``: a configuration
    file to read (``--config``), ``False`` to read none (``--no-config``), or
    ``None`` for the ``cudnn-trace.toml`` / ``pyproject.toml`` found from the
    working directory, as the command does.

    Problems with single lines of a trace do not raise: the document lists
    them in ``"problems"``. Raises ``ReportError`` when nothing could be read
    (or an argument is refused), ``BinaryNotFound`` when the installation has
    no binary.
    """
    args: List[str] = ["report", "--json"]
    if all:
        args.append("--all")
    for code in [ignore] if isinstance(ignore, str) else ignore:
        args += ["--ignore", code]
    for code, level in (severity or {}).items():
        args += ["--severity", "{}={}".format(code, level)]
    if config is False:
        args.append("--no-config")
    elif config is not None and config is not True:
        args += ["--config", os.fspath(config)]
    args.append("--")
    args += [os.fspath(p) for p in paths]
    done = subprocess.run(
        [binary()] + args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    stderr = done.stderr.decode("utf-8", "replace")
    if done.returncode != 0 or not done.stdout.strip():
        lines = [line for line in stderr.splitlines() if line.strip()]
        raise ReportError(
            lines[-1] if lines else "cudnn-trace report exited with status {}".format(done.returncode),
            done.returncode,
            stderr,
        )
    doc: Dict[str, Any] = json.loads(done.stdout.decode("utf-8"))
    return doc
