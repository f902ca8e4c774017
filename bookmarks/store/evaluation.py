"""Evaluation runs and records; the arena's starts, items, views and votes."""

from __future__ import annotations

import json

from bookmarks.errors import NotFoundError
from bookmarks.store.base import StoreBase, now


class EvaluationStore(StoreBase):
    # -- evaluation runs ----------------------------------------------------------
    def create_run(self, kind: str, story_id: int, method: str, params: dict, space: str) -> int:
        with self.transaction() as db:
            return db["eval_runs"].insert(
                {"kind": kind, "story_id": story_id, "method": method,
                 "params": json.dumps(params), "space": space, "status": "running",
                 "summary": "{}", "created_at": now(), "finished_at": None}).last_pk

    def run(self, run_id: int) -> dict:
        row = self._one("SELECT * FROM eval_runs WHERE id = ?", [run_id])
        if row is None:
            raise NotFoundError(f"There is no evaluation run with id {run_id}.")
        row["params"] = json.loads(row["params"])
        row["summary"] = json.loads(row["summary"] or "{}")
        return row

    def runs(self, story_id: int | None = None) -> list[dict]:
        where, params = ("WHERE story_id = ?", [story_id]) if story_id else ("", [])
        return [self.run(r["id"]) for r in self._rows(
            f"SELECT id FROM eval_runs {where} ORDER BY id DESC", params)]

    def add_record(self, run_id: int, item_key: str, payload: dict) -> None:
        with self.transaction() as db:
            db["eval_records"].insert({"run_id": run_id, "item_key": item_key,
                                       "payload": json.dumps(payload, ensure_ascii=False),
                                       "created_at": now()}, ignore=True)

    def records(self, run_id: int) -> list[dict]:
        return [json.loads(r["payload"]) for r in self._rows(
            "SELECT payload FROM eval_records WHERE run_id = ? ORDER BY id", [run_id])]

    def record_keys(self, run_id: int) -> set[str]:
        return {r["item_key"] for r in self._rows(
            "SELECT item_key FROM eval_records WHERE run_id = ?", [run_id])}

    def finish_run(self, run_id: int, summary: dict, status: str = "done") -> None:
        with self.transaction() as db:
            db["eval_runs"].update(run_id, {"summary": json.dumps(summary), "status": status,
                                            "finished_at": now()})

    # -- arena --------------------------------------------------------------------
    def add_arena_start(self, story_id: int, point: int, characters: list[str], setting: str,
                        first_speaker: str, first_line: str) -> int:
        with self.transaction() as db:
            return db["arena_starts"].insert(
                {"story_id": story_id, "point": point, "characters": json.dumps(characters),
                 "setting": setting, "first_speaker": first_speaker, "first_line": first_line,
                 "created_at": now()}).last_pk

    def arena_starts(self, story_id: int | None = None) -> list[dict]:
        where, params = ("WHERE story_id = ?", [story_id]) if story_id else ("", [])
        rows = self._rows(f"SELECT * FROM arena_starts {where} ORDER BY id", params)
        for r in rows:
            r["characters"] = json.loads(r["characters"])
        return rows

    def update_arena_start(self, start_id: int, setting: str, first_line: str) -> None:
        with self.transaction() as db:
            db["arena_starts"].update(start_id, {"setting": setting, "first_line": first_line})

    def add_arena_item(self, start_id: int, method_a: str, method_b: str, scene_a: int,
                       scene_b: int, turns: int) -> int:
        with self.transaction() as db:
            return db["arena_items"].insert(
                {"start_id": start_id, "method_a": method_a, "method_b": method_b,
                 "scene_a": scene_a, "scene_b": scene_b, "turns": turns,
                 "created_at": now()}).last_pk

    def arena_items(self) -> list[dict]:
        return self._rows("SELECT * FROM arena_items ORDER BY id")

    def arena_item(self, item_id: int) -> dict:
        row = self._one("SELECT * FROM arena_items WHERE id = ?", [item_id])
        if row is None:
            raise NotFoundError(f"There is no arena item with id {item_id}.")
        return row

    def arena_view(self, item_id: int, annotator: str, left: str, right: str) -> dict:
        """The sides this annotator sees for this item (the first assignment is kept)."""
        with self.transaction() as db:
            db["arena_views"].insert({"item_id": item_id, "annotator": annotator,
                                      "left_method": left, "right_method": right,
                                      "shown_at": now()}, ignore=True)
        return self._one("SELECT * FROM arena_views WHERE item_id = ? AND annotator = ?",
                         [item_id, annotator])

    def add_judgment(self, record: dict) -> bool:
        """Append a vote; False if this annotator already voted on this item."""
        with self.transaction() as db:
            before = db["judgments"].count
            db["judgments"].insert({**record, "created_at": now()}, ignore=True)
            return db["judgments"].count > before

    def judgments(self, source: str | None = None) -> list[dict]:
        if source:
            return self._rows("SELECT * FROM judgments WHERE source = ? ORDER BY id", [source])
        return self._rows("SELECT * FROM judgments ORDER BY id")

    def judged_items(self, annotator: str) -> set[int]:
        return {r["item_id"] for r in self._rows(
            "SELECT item_id FROM judgments WHERE annotator = ?", [annotator])}

