"""The model-call audit log, the reply cache and saved settings."""

from __future__ import annotations

import json
from typing import Any

from bookmarks.store.base import StoreBase, now


class CachedText(str):
    """A cached reply's text, with the tokens the model spent making it (m011): a reply
    served from the cache still counts what the model would have to do."""

    prompt_tokens: int
    completion_tokens: int

    def __new__(cls, text: str, prompt_tokens: int = 0, completion_tokens: int = 0):
        obj = super().__new__(cls, text)
        obj.prompt_tokens, obj.completion_tokens = prompt_tokens, completion_tokens
        return obj


class CallsStore(StoreBase):
    # -- model calls, cache, settings ---------------------------------------------
    def log_call(self, record: dict) -> None:
        with self.transaction() as db:
            db["llm_calls"].insert({"created_at": now(), **record})

    def turn_calls(self, turn_id: int) -> dict:
        """Model calls logged for the scene between the previous turn and this one: tokens
        spent, and apart, the calls the reply cache answered with what they first cost."""
        turn = self.turn(turn_id)
        prev = self._one("SELECT MAX(created_at) AS t FROM turns WHERE scene_id = ? AND idx < ?",
                         [turn.scene_id, turn.idx])
        since = (prev or {}).get("t") or "0"
        row = self._one(
            "SELECT COUNT(*) AS calls, COALESCE(SUM(CASE WHEN cached = 1 THEN 0 ELSE "
            "prompt_tokens + completion_tokens END), 0) AS tokens, "
            "COALESCE(SUM(latency_ms), 0) AS latency_ms, COALESCE(SUM(cached), 0) AS "
            "cached_calls, COALESCE(SUM(CASE WHEN cached = 1 THEN prompt_tokens + "
            "completion_tokens ELSE 0 END), 0) AS cached_tokens FROM llm_calls WHERE "
            "scene_id = ? AND created_at > ? AND created_at <= ?",
            [turn.scene_id, since, turn.created_at])
        return row or {"calls": 0, "tokens": 0, "latency_ms": 0, "cached_calls": 0,
                       "cached_tokens": 0}

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
        """A cached reply (a `CachedText`: the text, with what it cost when it was made)."""
        row = self._one("SELECT response, prompt_tokens, completion_tokens FROM llm_cache "
                        "WHERE key = ?", [key])
        if row is None:
            return None
        return CachedText(row["response"], row["prompt_tokens"] or 0, row["completion_tokens"] or 0)

    def cache_put(self, key: str, model: str, response: str, prompt_tokens: int = 0,
                  completion_tokens: int = 0) -> None:
        with self.transaction() as db:
            db["llm_cache"].upsert({"key": key, "model": model, "response": response,
                                    "prompt_tokens": prompt_tokens,
                                    "completion_tokens": completion_tokens,
                                    "created_at": now()}, pk="key")

    def get_setting(self, key: str, default: Any = None) -> Any:
        row = self._one("SELECT value FROM settings WHERE key = ?", [key])
        return json.loads(row["value"]) if row else default

    def set_setting(self, key: str, value: Any) -> None:
        with self.transaction() as db:
            db["settings"].upsert({"key": key, "value": json.dumps(value)}, pk="key")
