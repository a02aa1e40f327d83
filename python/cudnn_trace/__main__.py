"""``python -m cudnn_trace ARGS...``: the ``cudnn-trace`` command itself.

The process becomes the installed binary (``exec``), so that everything is as
with ``cudnn-trace ARGS...``: the options, the traced program as its child,
the exit status or signal, the terminal, and the binary's re-executions of
itself (``/proc/self/exe``).
"""

import sys

from ._binary import BinaryNotFound, exec_binary


def main() -> None:
    try:
        exec_binary(sys.argv[1:])
    except (BinaryNotFound, OSError) as e:
        sys.stderr.write("cudnn-trace: {}\n".format(e))
        # As a shell says for a command it cannot run.
        sys.exit(127 if isinstance(e, FileNotFoundError) else 126)


if __name__ == "__main__":
    main()
