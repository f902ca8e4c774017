"""What memory work is doing right now, for people waiting on it: which bookmark is
synchronizing, block k of n, actions read so far, elapsed and estimated remaining time.

A synchronization calls `report(...)` after each block; who listens is set per task with
`watch(scene_id)` (a context variable, so concurrent syncs of one turn all report to
it, and nothing else does). `BOARD` keeps the latest report per scene and bookmark, for
the UI to poll.
"""

from __future__ import annotations

import contextvars
import threading
import time

_scene: contextvars.ContextVar[int | None] = contextvars.ContextVar("progress_scene", default=None)


class ProgressBoard:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._work: dict[int, dict[str, dict]] = {}

    def update(self, scene_id: int, title: str, **fields: object) -> None:
        with self._lock:
            entry = self._work.setdefault(scene_id, {}).setdefault(
                title, {"title": title, "started": time.monotonic()})
            entry.update(fields, updated=time.monotonic())

    def clear(self, scene_id: int) -> None:
        with self._lock:
            self._work.pop(scene_id, None)

    def lines(self, scene_id: int) -> list[str]:
        """One line per bookmark being synchronized, e.g. "Maren's debt (state): block 3
        of 12, 192 of 760 actions read, 41 s, about 2 min left"."""
        with self._lock:
            entries = [dict(e) for e in self._work.get(scene_id, {}).values()]
        out = []
        now = time.monotonic()
        for e in entries:
            if e.get("done"):
                continue
            elapsed = now - e["started"]
            read, total = e.get("read", 0), e.get("total", 0)
            left = ""
            if read and total > read:
                secs = elapsed / read * (total - read)
                left = f", about {secs:.0f} s left" if secs < 120 else f", about {secs / 60:.0f} min left"
            out.append(f"{e['title']} ({e.get('type', '?')}): {e.get('unit', 'block')} "
                       f"{e.get('step', 0)} of {e.get('steps', '?')}, {read} of {total} actions "
                       f"read, {elapsed:.0f} s{left}")
        return out


BOARD = ProgressBoard()


def watch(scene_id: int | None) -> None:
    """Report this task's (and its children's) synchronization progress for `scene_id`."""
    _scene.set(scene_id)
    if scene_id is not None:
        BOARD.clear(scene_id)


def report(title: str, **fields: object) -> None:
    scene_id = _scene.get()
    if scene_id is not None:
        BOARD.update(scene_id, title, **fields)
