"""Where the `cudnn-trace` binary of this installation is, and running it.

The wheel (maturin, ``bindings = "bin"``) installs the binary as a script:
``<prefix>/bin/cudnn-trace`` next to the Python package, not inside it. Where
that is depends on how pip was told to install (a virtual environment,
``--user``, ``--prefix``, ``--target``, a distribution's own scheme), so the
binary is looked up the way pip placed it, most precise first.
"""

import csv
import os
import signal
import sys
import sysconfig
from pathlib import Path
from typing import Dict, List, Optional, Sequence

#: Names a `cudnn-trace` binary to use instead of the installed one (a
#: development build: ``CUDNN_TRACE_BIN=target/release/cudnn-trace``).
BIN_ENV = "CUDNN_TRACE_BIN"

_NAME = "cudnn-trace"


class BinaryNotFound(FileNotFoundError):
    """The `cudnn-trace` binary of this installation is missing."""


def binary() -> str:
    """The path of the `cudnn-trace` binary this package was installed with.

    Looked up, in order: ``$CUDNN_TRACE_BIN``; the file that this copy of the
    package's ``*.dist-info/RECORD`` lists, when it is there with the size
    recorded (exact for a virtual environment, ``--user``, ``--prefix`` and
    distribution schemes); ``bin/`` beside the package's directory (``pip
    install --target``, whose RECORD is wrong); the ``scripts`` directory of
    the install scheme (default, then user) whose library directory holds
    the package; then those directories whatever they hold, and the
    interpreter's own directory. Never a `cudnn-trace` found on ``PATH``:
    that could be another version.
    """
    override = os.environ.get(BIN_ENV)
    if override:
        if not _is_executable(override):
            raise BinaryNotFound("{}={}: not an executable file".format(BIN_ENV, override))
        return os.path.abspath(override)
    tried: List[str] = []
    for cand in _candidates():
        if cand in tried:
            continue
        tried.append(cand)
        if _is_executable(cand):
            return cand
    raise BinaryNotFound(
        "the cudnn-trace binary of this installation was not found (looked at {}); "
        "reinstall the cudnn-trace package, or set {} to a cudnn-trace binary".format(
            ", ".join(tried) or "nothing", BIN_ENV
        )
    )


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _candidates() -> List[str]:
    exe = _NAME + (sysconfig.get_config_var("EXE") or "")
    site_dir = Path(__file__).resolve().parent.parent
    out = _from_record(site_dir, exe)
    out.append(str(site_dir / "bin" / exe))
    schemes: List[Optional[str]] = [None, _user_scheme()]
    fallback: List[str] = []
    for scheme in schemes:
        paths = _scheme_paths(scheme)
        scripts = paths.get("scripts")
        if not scripts:
            continue
        libs = {_real(paths[k]) for k in ("purelib", "platlib") if paths.get(k)}
        (out if str(site_dir) in libs else fallback).append(os.path.join(scripts, exe))
    out += fallback
    # A virtual environment used without activating it.
    out.append(os.path.join(os.path.dirname(os.path.abspath(sys.executable)), exe))
    return out


def _scheme_paths(scheme: Optional[str]) -> Dict[str, str]:
    try:
        return sysconfig.get_paths(scheme) if scheme else sysconfig.get_paths()
    except KeyError:  # a scheme this interpreter does not have
        return {}


def _real(path: str) -> str:
    return str(Path(path).resolve())


def _from_record(site_dir: Path, exe: str) -> List[str]:
    """The binary as this copy's RECORD names it (relative to the directory
    holding the ``*.dist-info``: ``../../../bin/cudnn-trace`` in a virtual
    environment), when a file of the recorded size is there."""
    found: List[str] = []
    try:
        infos = sorted(site_dir.glob("cudnn_trace-*.dist-info"))
    except OSError:
        return found
    for info in infos:
        try:
            with open(str(info / "RECORD"), encoding="utf-8", newline="") as f:
                rows = list(csv.reader(f))
        except (OSError, csv.Error):
            continue
        for row in rows:
            if len(row) < 3 or not ("/" + row[0]).endswith("/bin/" + exe):
                continue
            path = os.path.normpath(os.path.join(str(site_dir), row[0]))
            try:
                if os.path.getsize(path) == int(row[2]):
                    found.append(path)
            except (OSError, ValueError):
                continue
    return found


def _user_scheme() -> str:
    if sys.version_info >= (3, 10):
        return sysconfig.get_preferred_scheme("user")  # novermin (guarded)
    return "posix_user"


def launch_environment() -> Dict[str, str]:
    """The environment this interpreter was started with.

    Python changes its own environment as it starts: in the C or POSIX
    locale it sets ``LC_CTYPE=C.UTF-8`` (PEP 538), which a program traced by
    ``python -m cudnn_trace`` would then inherit although the user never set
    it. ``/proc/self/environ`` still holds the environment as the kernel
    passed it; without it (no ``/proc``), ``os.environ``."""
    try:
        with open("/proc/self/environ", "rb") as f:
            raw = f.read()
    except OSError:
        return dict(os.environ)
    env: Dict[str, str] = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep and key:
            env[os.fsdecode(key)] = os.fsdecode(value)
    return env


def exec_binary(args: Sequence[str]) -> None:
    """Replaces this process with the binary (never returns): the program it
    traces is its child, exit status, signals and terminal as with
    `cudnn-trace` itself, and the binary's own re-executions (the version
    probe runs ``/proc/self/exe``) find the binary, not Python."""
    path = binary()
    # Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored
    # across exec: without this the traced program would start with both
    # ignored (subprocess's restore_signals does the same).
    for name in ("SIGPIPE", "SIGXFSZ", "SIGXFZ"):
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(path, [path] + list(args), launch_environment())
