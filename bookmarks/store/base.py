"""The store's foundation: the shared connection, its lock, transactions and the row
types the other parts return."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from bookmarks.store.migrations import migrations


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
        self.db = Database(conn)
        self.db.execute("PRAGMA foreign_keys = ON")
        self.db.execute("PRAGMA busy_timeout = 30000")
        if self.path != ":memory:":
            self.db.enable_wal()
            self.db.execute("PRAGMA synchronous = NORMAL")
        with self._lock:
            migrations.apply(self.db)

    # -- plumbing -------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[Database]:
        """All writes inside commit together, or none do (re-entrant)."""
        with self._lock, self.db.atomic():
            yield self.db

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

