"""The store's foundation: the shared connection, its lock, transactions and the row
types the other parts return."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from bookmarks.store.migrations import migrations

log = logging.getLogger(__name__)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class StoryInfo:
    id: int
    title: str
    description: str
    author: str
    source_format: str
    n_actions: int
    created_at: str
    last_used_at: str | None
    trunk_id: int
    presence_rules: int = 0  # the presence rules its presence was derived under (m015)


@dataclass(frozen=True)
class SceneInfo:
    id: int
    story_id: int
    branch_id: int
    title: str
    start_point: int
    cast: list[str]
    setting: str
    method: str
    settings: dict
    created_at: str
    updated_at: str


@dataclass(frozen=True)
class Turn:
    id: int
    scene_id: int
    branch_id: int
    idx: int
    character: str
    text: str
    source: str
    method: str | None
    created_at: str
    edited_at: str | None = None


class StoreBase:
    def __init__(self, path: str | Path = ":memory:"):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30,
                               isolation_level=None)
        self._lock = threading.RLock()
        self._reads: tuple | None = None  # (story id, presence.Reads): see derive_presence
        self.db = Database(conn)
        self.db.execute("PRAGMA foreign_keys = ON")
        self.db.execute("PRAGMA busy_timeout = 30000")
        if self.path != ":memory:":
            self.db.enable_wal()
            self.db.execute("PRAGMA synchronous = NORMAL")
        self._depth = 0  # nesting of `transaction()`
        self._pending: list[dict] = []  # changes announced when the transaction commits
        self._listeners: list[Callable[[dict], None]] = []
        with self._lock:
            migrations.apply(self.db)

    # -- changes of what memory may have read ------------------------------------------
    def subscribe(self, listener: Callable[[dict], None]) -> None:
        """Call `listener(change)` after every committed change of what memory may have
        read: {"kind": "epoch", "story_id", "branches"} (undo, edit, presence corrections,
        merges, bookmark edits and pins, cards), {"kind": "scene_deleted", "scene_id"},
        {"kind": "story_deleted", "story_id"}. Background work drops what it prepared."""
        self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[dict], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _changed(self, change: dict) -> None:
        with self._lock:
            if self._depth:  # inside a transaction: announced when it commits
                self._pending.append(change)
                return
        for listener in list(self._listeners):
            try:
                listener(change)
            except Exception:  # noqa: BLE001 - a listener never undoes a committed change
                log.exception("a change listener failed")

    def _bump_epochs(self, db: Database, branch_ids: list[int]) -> None:
        """Inside a transaction: the branches' epochs move (see `branch_epoch`)."""
        for branch_id in branch_ids:
            db.execute("UPDATE branches SET epoch = epoch + 1 WHERE id = ?", [branch_id])

    def branch_epoch(self, branch_id: int) -> int:
        """How many times something this branch's memory may have read changed: its lines
        (undo, regenerate, edit), a bookmark edit or pin, a card, on it or on an ancestor
        (the trunk's: presence corrections, merges, story-wide pins). The sum of the epochs
        of the branch and its ancestors; it only ever grows (see m004)."""
        row = self._one(
            "WITH RECURSIVE chain(id, parent_id, epoch) AS (SELECT id, parent_id, epoch FROM "
            "branches WHERE id = ? UNION ALL SELECT b.id, b.parent_id, b.epoch FROM branches b "
            "JOIN chain c ON b.id = c.parent_id) SELECT COUNT(*) AS n, SUM(epoch) AS epoch "
            "FROM chain", [branch_id])
        if not row or not row["n"]:
            from bookmarks.errors import NotFoundError

            raise NotFoundError(f"There is no branch with id {branch_id}.")
        return row["epoch"]

    # -- plumbing -------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[Database]:
        """All writes inside commit together, or none do (re-entrant). Changes announced
        inside (`_changed`) reach listeners once the outermost transaction has committed."""
        with self._lock:
            outer = self._depth == 0
            self._depth += 1
            try:
                with self.db.atomic():
                    yield self.db
            except BaseException:
                if outer:
                    self._pending.clear()
                raise
            finally:
                self._depth -= 1
            pending, self._pending = (self._pending, []) if outer else ([], self._pending)
        for change in pending:
            self._changed(change)

    def _rows(self, sql: str, params: Any = ()) -> list[dict]:
        with self._lock:
            cur = self.db.execute(sql, params)
            cols = [c[0] for c in cur.description]
            return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]

    def _one(self, sql: str, params: Any = ()) -> dict | None:
        rows = self._rows(sql, params)
        return rows[0] if rows else None

    def close(self) -> None:
        with self._lock:
            self.db.conn.close()

    def integrity_ok(self) -> bool:
        return self._one("PRAGMA integrity_check")["integrity_check"] == "ok"

