"""Entry point of the embedded model server's process: `python -m bookmarks.models.embedded_child
--parent PID -- <llama_cpp.server arguments>`.

It runs llama-cpp-python's OpenAI-compatible server, and a watchdog thread that ends the
process as soon as its parent is gone — also when the parent was killed outright
(SIGKILL, a crash), when no exit handler of the parent can run. Without it such a server
outlives the app as an orphan holding a port and hundreds of MB.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
import time


def watch(parent: int, every: float = 0.5) -> None:
    while True:
        if os.getppid() != parent:  # re-parented: the app is gone
            os._exit(0)
        time.sleep(every)


def main(argv: list[str]) -> None:
    if len(argv) < 3 or argv[0] != "--parent" or argv[2] != "--":
        raise SystemExit("usage: python -m bookmarks.models.embedded_child --parent PID -- ARGS…")
    parent = int(argv[1])
    threading.Thread(target=watch, args=(parent,), daemon=True, name="parent-watchdog").start()
    sys.argv = ["llama_cpp.server", *argv[3:]]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
