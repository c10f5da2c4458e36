"""The child process of ``LocalModel``: llama.cpp's server, bound to its parent's life.

    python .../selfrag_nb/llm/local_server.py --parent PID -- <llama_cpp.server arguments>
      sys.path[0]       this folder is dropped (its modules must not shadow the server's imports)
      watchdog thread   every 0.5 s: parent gone (POSIX: we were re-parented) -> exit now
      llama_cpp.server  run as ``python -m llama_cpp.server <arguments>`` in this process

Why a launcher and not ``python -m llama_cpp.server`` directly: ``LocalModel``
stops its server on ``stop()``, on garbage collection and at interpreter exit,
but a parent killed outright (SIGKILL, a crashed Jupyter kernel) runs none of
those. The watchdog makes the server follow its parent instead of holding
the port and a CPU core as an orphan. On Windows a process is not
re-parented, so there only the parent's own clean-up applies.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
import time
from collections.abc import Sequence

__all__ = ["main"]

#: How often the watchdog looks for the parent (seconds).
POLL_S = 0.5


def _watch(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            # The parent died and we were re-parented: no one will stop us.
            os._exit(0)
        time.sleep(POLL_S)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse ``--parent PID --``, start the watchdog, run the server."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3 or args[0] != "--parent" or args[2] != "--" or not args[1].isdigit():
        sys.stderr.write("usage: python local_server.py --parent PID -- SERVER_ARGS...\n")
        raise SystemExit(2)
    parent = int(args[1])
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    if os.name == "posix":
        threading.Thread(target=_watch, args=(parent,), daemon=True, name="parent-watchdog").start()
    sys.argv = ["llama_cpp.server", *args[3:]]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
