"""The model-call audit log, the reply cache and saved settings."""

from __future__ import annotations

import json
from typing import Any

from bookmarks.store.base import StoreBase, now


class CallsStore(StoreBase):
    # -- model calls, cache, settings ---------------------------------------------
    def log_call(self, record: dict) -> None:
        with self.transaction() as db:
            db["llm_calls"].insert({"created_at": now(), **record})

    def turn_calls(self, turn_id: int) -> dict:
        """Model calls logged for the scene between the previous turn and this one."""
        turn = self.turn(turn_id)
        prev = self._one("SELECT MAX(created_at) AS t FROM turns WHERE scene_id = ? AND idx < ?",
                         [turn.scene_id, turn.idx])
        since = (prev or {}).get("t") or "0"
        row = self._one(
            "SELECT COUNT(*) AS calls, COALESCE(SUM(prompt_tokens + completion_tokens), 0) AS "
            "tokens, COALESCE(SUM(latency_ms), 0) AS latency_ms FROM llm_calls WHERE "
            "scene_id = ? AND created_at > ? AND created_at <= ?",
            [turn.scene_id, since, turn.created_at])
        return row or {"calls": 0, "tokens": 0, "latency_ms": 0}

    def call_rates(self, role: str, purpose_like: str = "sync:%") -> dict:
        """Measured means of this role's successful, uncached calls (for estimates)."""
        row = self._one(
            "SELECT COUNT(*) AS n, AVG(latency_ms) AS ms, AVG(prompt_tokens + completion_tokens) "
            "AS tokens FROM llm_calls WHERE role = ? AND ok = 1 AND cached = 0 AND purpose LIKE ?",
            [role, purpose_like])
        return row or {"n": 0, "ms": None, "tokens": None}

    def calls(self, limit: int = 100) -> list[dict]:
        return self._rows("SELECT * FROM llm_calls ORDER BY id DESC LIMIT ?", [limit])

    def cache_get(self, key: str) -> str | None:
        row = self._one("SELECT response FROM llm_cache WHERE key = ?", [key])
        return row["response"] if row else None

    def cache_put(self, key: str, model: str, response: str) -> None:
        with self.transaction() as db:
            db["llm_cache"].upsert({"key": key, "model": model, "response": response,
                                    "created_at": now()}, pk="key")

    def get_setting(self, key: str, default: Any = None) -> Any:
        row = self._one("SELECT value FROM settings WHERE key = ?", [key])
        return json.loads(row["value"]) if row else default

    def set_setting(self, key: str, value: Any) -> None:
        with self.transaction() as db:
            db["settings"].upsert({"key": key, "value": json.dumps(value)}, pk="key")
