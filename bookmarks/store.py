"""The SQLite store: the only module that reads or writes the database.

One file, WAL mode, schema from `migrations.py`. A single connection shared by all
threads (Gradio workers, the async engine) behind a re-entrant lock; every multi-row
write happens inside `transaction()` so it commits whole or not at all.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from .errors import NotFoundError
from .memory import resolve_refs
from .migrations import migrations
from .story import Action, Character, Question, Story


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


class Store:
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

    # -- stories --------------------------------------------------------------
    def add_story(self, story: Story) -> int:
        with self.transaction() as db:
            story_id = db["stories"].insert(
                {"title": story.title, "description": story.description,
                 "author": story.author, "source_format": story.source_format,
                 "n_actions": len(story.actions), "created_at": now(), "last_used_at": None}
            ).last_pk
            db["characters"].insert_all(
                {"story_id": story_id, "name": c.name, "aliases": json.dumps(c.aliases),
                 "major": int(c.major)} for c in story.characters
            )
            db["actions"].insert_all(
                ({"story_id": story_id, "idx": a.index, "character": a.character,
                  "text": a.text, "chapter": a.chapter} for a in story.actions),
                batch_size=2000,
            )
            db["questions"].insert_all(
                {"story_id": story_id, "qid": q.id, "after": q.after,
                 "character": q.character, "question": q.question,
                 "options": json.dumps(q.options), "answer": q.answer,
                 "evidence": json.dumps(q.evidence)} for q in story.questions
            )
            db["branches"].insert({"story_id": story_id, "parent_id": None, "fork_point": 0,
                                   "name": "trunk", "created_at": now()})
        return story_id

    def list_stories(self) -> list[StoryInfo]:
        rows = self._rows(
            "SELECT s.*, b.id AS trunk_id FROM stories s JOIN branches b "
            "ON b.story_id = s.id AND b.parent_id IS NULL "
            "ORDER BY COALESCE(s.last_used_at, s.created_at) DESC, s.id DESC"
        )
        return [StoryInfo(**r) for r in rows]

    def story(self, story_id: int) -> StoryInfo:
        row = self._one(
            "SELECT s.*, b.id AS trunk_id FROM stories s JOIN branches b "
            "ON b.story_id = s.id AND b.parent_id IS NULL WHERE s.id = ?", [story_id]
        )
        if row is None:
            raise NotFoundError(f"There is no story with id {story_id}.")
        return StoryInfo(**row)

    def find_story(self, title: str) -> StoryInfo | None:
        row = self._one("SELECT id FROM stories WHERE title = ? ORDER BY id LIMIT 1", [title])
        return self.story(row["id"]) if row else None

    def touch_story(self, story_id: int) -> None:
        with self.transaction() as db:
            db["stories"].update(story_id, {"last_used_at": now()})

    def characters(self, story_id: int) -> list[Character]:
        return [
            Character(name=r["name"], aliases=json.loads(r["aliases"] or "[]"),
                      major=bool(r["major"]))
            for r in self._rows("SELECT * FROM characters WHERE story_id = ? ORDER BY id",
                                [story_id])
        ]

    def action_counts(self, story_id: int) -> dict[str, int]:
        return {
            r["character"]: r["n"]
            for r in self._rows("SELECT character, COUNT(*) AS n FROM actions "
                                "WHERE story_id = ? GROUP BY character ORDER BY n DESC",
                                [story_id])
        }

    def chapters(self, story_id: int) -> list[tuple[str, int]]:
        """(chapter label, first action index) in story order."""
        return [
            (r["chapter"], r["first"])
            for r in self._rows("SELECT chapter, MIN(idx) AS first FROM actions WHERE "
                                "story_id = ? AND chapter IS NOT NULL GROUP BY chapter "
                                "ORDER BY first", [story_id])
        ]

    def actions(self, story_id: int, start: int = 1, end: int | None = None) -> list[Action]:
        """Trunk actions with start ≤ index ≤ end (1-based, inclusive)."""
        end = end if end is not None else 1 << 62
        return [
            Action(index=r["idx"], character=r["character"], text=r["text"],
                   chapter=r["chapter"])
            for r in self._rows("SELECT * FROM actions WHERE story_id = ? AND idx BETWEEN ? "
                                "AND ? ORDER BY idx", [story_id, start, end])
        ]

    def action_tuples(self, story_id: int, start: int, end: int) -> list[tuple[int, str, str]]:
        """(index, character, text) of trunk actions start..end — the engine's hot path,
        without building a model object per row."""
        with self._lock:
            return self.db.execute(
                "SELECT idx, character, text FROM actions WHERE story_id = ? AND idx BETWEEN ? "
                "AND ? ORDER BY idx", [story_id, start, end]).fetchall()

    def questions(self, story_id: int) -> list[Question]:
        return [
            Question(id=r["qid"], after=r["after"], character=r["character"],
                     question=r["question"], options=json.loads(r["options"]),
                     answer=r["answer"], evidence=json.loads(r["evidence"] or "[]"))
            for r in self._rows("SELECT * FROM questions WHERE story_id = ? ORDER BY after, "
                                "qid", [story_id])
        ]

    def merge_characters(self, story_id: int, keep: str, merge: str) -> None:
        """Fold character `merge` into `keep`: its actions and name become `keep`'s."""
        with self.transaction() as db:
            rows = {r["name"]: r for r in self._rows(
                "SELECT * FROM characters WHERE story_id = ? AND name IN (?, ?)",
                [story_id, keep, merge])}
            if keep not in rows or merge not in rows:
                missing = merge if keep in rows else keep
                raise NotFoundError(f"The story has no character named {missing!r}.")
            aliases = json.loads(rows[keep]["aliases"] or "[]")
            for name in [merge, *json.loads(rows[merge]["aliases"] or "[]")]:
                if name.casefold() not in {a.casefold() for a in [keep, *aliases]}:
                    aliases.append(name)
            db["characters"].update(rows[keep]["id"], {"aliases": json.dumps(aliases),
                                    "major": max(rows[keep]["major"], rows[merge]["major"])})
            db.execute("UPDATE actions SET character = ? WHERE story_id = ? AND character = ?",
                       [keep, story_id, merge])
            db["characters"].delete(rows[merge]["id"])

    def delete_story(self, story_id: int) -> None:
        self.story(story_id)
        with self.transaction() as db:
            scene_ids = "SELECT id FROM scenes WHERE story_id = ?"
            turn_ids = f"SELECT id FROM turns WHERE scene_id IN ({scene_ids})"
            bm_ids = "SELECT id FROM bookmarks WHERE story_id = ?"
            for sql in (
                f"DELETE FROM turn_events WHERE turn_id IN ({turn_ids})",
                f"DELETE FROM turns WHERE scene_id IN ({scene_ids})",
                "DELETE FROM scenes WHERE story_id = ?",
                f"DELETE FROM bookmark_versions WHERE bookmark_id IN ({bm_ids})",
                "DELETE FROM bookmarks WHERE story_id = ?",
                "UPDATE branches SET parent_id = NULL WHERE story_id = ?",
                "DELETE FROM branches WHERE story_id = ?",
                "DELETE FROM questions WHERE story_id = ?",
                "DELETE FROM actions WHERE story_id = ?",
                "DELETE FROM characters WHERE story_id = ?",
                "DELETE FROM stories WHERE id = ?",
            ):
                db.execute(sql, [story_id])

    # -- scenes and turns -------------------------------------------------------
    def create_scene(self, story_id: int, *, start_point: int, cast: list[str],
                     setting: str = "", method: str = "vanilla", settings: dict | None = None,
                     title: str = "") -> SceneInfo:
        info = self.story(story_id)
        with self.transaction() as db:
            branch_id = db["branches"].insert(
                {"story_id": story_id, "parent_id": info.trunk_id, "fork_point": start_point,
                 "name": title or f"scene at {start_point}", "created_at": now()}
            ).last_pk
            scene_id = db["scenes"].insert(
                {"story_id": story_id, "branch_id": branch_id,
                 "title": title or f"{info.title} — from action {start_point}",
                 "start_point": start_point, "cast": json.dumps(cast), "setting": setting,
                 "method": method, "settings": json.dumps(settings or {}),
                 "created_at": now(), "updated_at": now()}
            ).last_pk
            db["stories"].update(story_id, {"last_used_at": now()})
        return self.scene(scene_id)

    def delete_scene(self, scene_id: int) -> None:
        """Remove a scene with its turns and the memory written on its branch (refused
        when other scenes fork from it)."""
        scene = self.scene(scene_id)
        if self.child_forks(scene.branch_id):
            raise ValueError("Other scenes fork from this one; delete them first.")
        with self.transaction() as db:
            turns = "SELECT id FROM turns WHERE scene_id = ?"
            for sql, arg in ((f"DELETE FROM turn_events WHERE turn_id IN ({turns})", scene_id),
                             ("DELETE FROM turns WHERE scene_id = ?", scene_id),
                             ("DELETE FROM bookmark_versions WHERE branch_id = ?", scene.branch_id),
                             ("DELETE FROM sync_costs WHERE branch_id = ?", scene.branch_id),
                             ("DELETE FROM scenes WHERE id = ?", scene_id),
                             ("DELETE FROM branches WHERE id = ?", scene.branch_id)):
                db.execute(sql, [arg])

    def update_scene_settings(self, scene_id: int, settings: dict) -> None:
        with self.transaction() as db:
            db["scenes"].update(scene_id, {"settings": json.dumps(settings), "updated_at": now()})

    def scene(self, scene_id: int) -> SceneInfo:
        row = self._one("SELECT * FROM scenes WHERE id = ?", [scene_id])
        if row is None:
            raise NotFoundError(f"There is no scene with id {scene_id}.")
        row["cast"] = json.loads(row["cast"] or "[]")
        row["settings"] = json.loads(row["settings"] or "{}")
        return SceneInfo(**row)

    def list_scenes(self, story_id: int | None = None) -> list[SceneInfo]:
        where, params = ("WHERE story_id = ?", [story_id]) if story_id else ("", [])
        ids = self._rows(f"SELECT id FROM scenes {where} ORDER BY updated_at DESC", params)
        return [self.scene(r["id"]) for r in ids]

    def turns(self, scene_id: int) -> list[Turn]:
        """The scene's own turns (a fork's inherited lines are on its parent branch)."""
        return [Turn(**r) for r in self._rows(
            "SELECT * FROM turns WHERE scene_id = ? ORDER BY idx", [scene_id])]

    def branch_scene(self, branch_id: int) -> int | None:
        row = self._one("SELECT id FROM scenes WHERE branch_id = ?", [branch_id])
        return row["id"] if row else None

    def add_turn(self, scene_id: int, *, character: str, text: str, source: str,
                 method: str | None = None, events: list[dict] | None = None) -> Turn:
        """Append one action to the scene's branch with its events, atomically."""
        scene = self.scene(scene_id)
        with self.transaction() as db:
            last = self._one("SELECT MAX(idx) AS m FROM turns WHERE branch_id = ?",
                             [scene.branch_id])
            idx = (last["m"] if last and last["m"] is not None else scene.start_point) + 1
            turn_id = db["turns"].insert(
                {"scene_id": scene_id, "branch_id": scene.branch_id, "idx": idx,
                 "character": character, "text": text, "source": source, "method": method,
                 "created_at": now()}
            ).last_pk
            db["turn_events"].insert_all(
                {"turn_id": turn_id, "seq": n, "kind": e["kind"],
                 "payload": json.dumps(e, ensure_ascii=False)}
                for n, e in enumerate(events or [])
            )
            db["scenes"].update(scene_id, {"updated_at": now()})
        return Turn(**self._one("SELECT * FROM turns WHERE id = ?", [turn_id]))

    def turn(self, turn_id: int) -> Turn:
        row = self._one("SELECT * FROM turns WHERE id = ?", [turn_id])
        if row is None:
            raise NotFoundError(f"There is no turn with id {turn_id}.")
        return Turn(**row)

    def child_forks(self, branch_id: int) -> list[dict]:
        return self._rows("SELECT * FROM branches WHERE parent_id = ?", [branch_id])

    def delete_turn(self, turn_id: int) -> None:
        """Remove the last turn of its branch (its events go too; memory versions stay,
        as they only cover the storyline before it)."""
        turn = self.turn(turn_id)
        if self.last_turn_index(turn.branch_id) != turn.idx:
            raise ValueError("Only the last turn of a scene can be removed.")
        if any(b["fork_point"] >= turn.idx for b in self.child_forks(turn.branch_id)):
            raise ValueError("This turn has forks that continue from it; undo in a fork instead.")
        with self.transaction() as db:
            db.execute("UPDATE bookmark_versions SET turn_id = NULL WHERE turn_id = ?", [turn_id])
            db.execute("UPDATE sync_costs SET turn_id = NULL WHERE turn_id = ?", [turn_id])
            db.execute("DELETE FROM turn_events WHERE turn_id = ?", [turn_id])
            db.execute("DELETE FROM turns WHERE id = ?", [turn_id])
            db["scenes"].update(turn.scene_id, {"updated_at": now()})

    def edit_turn(self, turn_id: int, text: str) -> Turn:
        """Change a line; memory that had read it (versions on this branch at p ≥ its
        index) is dropped so it is synchronized again from an earlier checkpoint."""
        turn = self.turn(turn_id)
        if any(b["fork_point"] >= turn.idx for b in self.child_forks(turn.branch_id)):
            raise ValueError("Forks continue from this line; edit it in a new fork instead.")
        with self.transaction() as db:
            db.execute("UPDATE turns SET text = ? WHERE id = ?", [text, turn_id])
            db.execute("DELETE FROM bookmark_versions WHERE branch_id = ? AND p >= ?",
                       [turn.branch_id, turn.idx])
            db["scenes"].update(turn.scene_id, {"updated_at": now()})
        return self.turn(turn_id)

    def scene_events(self, scene_id: int, kinds: tuple[str, ...]) -> list[dict]:
        q = ",".join("?" * len(kinds))
        return [json.loads(r["payload"]) for r in self._rows(
            f"SELECT e.payload FROM turn_events e JOIN turns t ON t.id = e.turn_id "
            f"WHERE t.scene_id = ? AND e.kind IN ({q}) ORDER BY t.idx, e.seq",
            [scene_id, *kinds])]

    def turn_events(self, turn_id: int) -> list[dict]:
        return [json.loads(r["payload"]) for r in self._rows(
            "SELECT payload FROM turn_events WHERE turn_id = ? ORDER BY seq", [turn_id])]

    def branch_chain(self, branch_id: int) -> list[dict]:
        """The branch and its ancestors up to the trunk (this branch first)."""
        chain = []
        current: int | None = branch_id
        while current is not None:
            row = self._one("SELECT * FROM branches WHERE id = ?", [current])
            if row is None:
                raise NotFoundError(f"There is no branch with id {current}.")
            chain.append(row)
            current = row["parent_id"]
        return chain

    def branch_turns(self, branch_id: int, lo: int, hi: int) -> list[Turn]:
        return [Turn(**r) for r in self._rows(
            "SELECT * FROM turns WHERE branch_id = ? AND idx BETWEEN ? AND ? ORDER BY idx",
            [branch_id, lo, hi])]

    def count_actions_by(self, story_id: int, names: list[str], lo: int, hi: int) -> int:
        q = ",".join("?" * len(names))
        row = self._one(f"SELECT COUNT(*) AS n FROM actions WHERE story_id = ? AND idx BETWEEN ? "
                        f"AND ? AND character IN ({q})", [story_id, lo, hi, *names])
        return row["n"] if row else 0

    def count_turns_by(self, branch_id: int, names: list[str], lo: int, hi: int) -> int:
        q = ",".join("?" * len(names))
        row = self._one(f"SELECT COUNT(*) AS n FROM turns WHERE branch_id = ? AND idx BETWEEN ? "
                        f"AND ? AND character IN ({q})", [branch_id, lo, hi, *names])
        return row["n"] if row else 0

    def last_turn_index(self, branch_id: int) -> int | None:
        row = self._one("SELECT MAX(idx) AS m FROM turns WHERE branch_id = ?", [branch_id])
        return row["m"] if row else None

    def fork_scene(self, scene_id: int, at_idx: int, title: str = "") -> SceneInfo:
        """A new scene on a new branch that keeps the scene's lines up to index at_idx."""
        scene = self.scene(scene_id)
        with self.transaction() as db:
            branch_id = db["branches"].insert(
                {"story_id": scene.story_id, "parent_id": scene.branch_id, "fork_point": at_idx,
                 "name": title or f"fork of scene {scene_id} at {at_idx}", "created_at": now()}
            ).last_pk
            new_id = db["scenes"].insert(
                {"story_id": scene.story_id, "branch_id": branch_id,
                 "title": title or f"{scene.title} (fork at {at_idx})", "start_point": at_idx,
                 "cast": json.dumps(scene.cast), "setting": scene.setting,
                 "method": scene.method, "settings": json.dumps(scene.settings),
                 "created_at": now(), "updated_at": now()}
            ).last_pk
        return self.scene(new_id)

    # -- bookmarks --------------------------------------------------------------
    def bookmarks(self, story_id: int, space: str) -> list[dict]:
        return self._rows("SELECT * FROM bookmarks WHERE story_id = ? AND space = ? ORDER BY id",
                          [story_id, space])

    def versions(self, bookmark_ids: list[int], branch_ids: list[int], max_p: int) -> list[dict]:
        """Versions of these bookmarks written on these branches with p ≤ max_p."""
        if not bookmark_ids or not branch_ids:
            return []
        bq = ",".join("?" * len(bookmark_ids))
        rq = ",".join("?" * len(branch_ids))
        return self._rows(
            f"SELECT * FROM bookmark_versions WHERE bookmark_id IN ({bq}) AND branch_id IN ({rq}) "
            "AND p <= ? ORDER BY bookmark_id, p, id", [*bookmark_ids, *branch_ids, max_p])

    def bookmark_history(self, bookmark_id: int) -> list[dict]:
        return self._rows("SELECT * FROM bookmark_versions WHERE bookmark_id = ? ORDER BY p, id",
                          [bookmark_id])

    def match_decisions(self, story_id: int, space: str) -> dict[tuple[str, int], str]:
        return {(r["proposal"], r["bookmark_id"]): r["decision"] for r in self._rows(
            "SELECT * FROM match_decisions WHERE story_id = ? AND space = ?", [story_id, space])}

    def sync_costs(self, story_id: int, space: str | None = None) -> list[dict]:
        if space is None:
            return self._rows("SELECT * FROM sync_costs WHERE story_id = ? ORDER BY id", [story_id])
        return self._rows("SELECT * FROM sync_costs WHERE story_id = ? AND space = ? ORDER BY id",
                          [story_id, space])

    def commit_memory(self, writes, *, scene_id: int | None = None,
                      turn: dict | None = None, events: list[dict] | None = None,
                      replace_turn_id: int | None = None) -> Turn | None:
        """Write a step's new bookmarks, versions, costs, decisions (and its turn) at once.

        `writes` is a `grounding.MemoryWrites`; new bookmarks (id None) get their ids here."""
        with self.transaction() as db:
            for bm in writes.new_bookmarks:
                if bm.id is None:
                    bm.id = db["bookmarks"].insert(
                        {"story_id": bm.story_id, "space": bm.space, "subject": bm.subject,
                         "type": bm.type, "title": bm.title, "pinned": int(bm.pinned),
                         "created_at": now()}).last_pk
            turn_row = None
            if replace_turn_id is not None:
                self.delete_turn(replace_turn_id)
            if turn is not None and scene_id is not None:
                turn_row = self.add_turn(scene_id, events=resolve_refs(events or []), **turn)
            turn_id = turn_row.id if turn_row else None
            for v in writes.versions:
                v.bookmark.version_id = db["bookmark_versions"].insert(
                    {"bookmark_id": v.bookmark.id, "branch_id": v.branch_id, "p": v.p,
                     "content": v.content.model_dump_json(), "turn_id": turn_id,
                     "created_at": now()}).last_pk
            for c in writes.costs:
                bm = c.pop("bookmark")
                db["sync_costs"].insert({**c, "bookmark_id": bm.id, "turn_id": turn_id,
                                         "created_at": now()})
            for d in writes.decisions:
                db["match_decisions"].upsert({**d}, pk=("story_id", "space", "proposal",
                                                        "bookmark_id"))
        return turn_row

    def set_bookmark_content(self, bookmark_id: int, branch_id: int, p: int, content,
                             pinned: bool) -> None:
        """A user's edit: a new version at the same sync point, and the pin flag."""
        with self.transaction() as db:
            db["bookmark_versions"].insert(
                {"bookmark_id": bookmark_id, "branch_id": branch_id, "p": p,
                 "content": content.model_dump_json(), "turn_id": None, "created_at": now()})
            db["bookmarks"].update(bookmark_id, {"pinned": int(pinned)})

    def bookmark(self, bookmark_id: int) -> dict:
        row = self._one("SELECT * FROM bookmarks WHERE id = ?", [bookmark_id])
        if row is None:
            raise NotFoundError(f"There is no bookmark with id {bookmark_id}.")
        return row

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
