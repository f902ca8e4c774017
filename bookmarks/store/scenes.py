"""Scenes, branches and turns."""

from __future__ import annotations

import json

from bookmarks.errors import NotFoundError
from bookmarks.store.base import SceneInfo, StoreBase, Turn, now


class ScenesStore(StoreBase):
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
                             ("DELETE FROM bookmark_overrides WHERE branch_id = ?",
                              scene.branch_id),
                             ("DELETE FROM sync_costs WHERE branch_id = ?", scene.branch_id),
                             ("DELETE FROM scenes WHERE id = ?", scene_id),
                             ("DELETE FROM branches WHERE id = ?", scene.branch_id)):
                db.execute(sql, [arg])
        self._changed({"kind": "scene_deleted", "scene_id": scene_id})

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
        """Remove the last turn of its branch (undo, regenerate). Its events go too, and so
        does every memory version on this branch that read it (sync point p ≥ its index):
        the next turn synchronizes again from the last checkpoint before it."""
        turn = self.turn(turn_id)
        if self.last_turn_index(turn.branch_id) != turn.idx:
            raise ValueError("Only the last turn of a scene can be removed.")
        if any(b["fork_point"] >= turn.idx for b in self.child_forks(turn.branch_id)):
            raise ValueError("This turn has forks that continue from it; undo in a fork instead.")
        with self.transaction() as db:
            db.execute("DELETE FROM bookmark_versions WHERE branch_id = ? AND p >= ?",
                       [turn.branch_id, turn.idx])
            self._bump_epochs(db, [turn.branch_id])
            db.execute("UPDATE bookmark_versions SET turn_id = NULL WHERE turn_id = ?", [turn_id])
            db.execute("UPDATE sync_costs SET turn_id = NULL WHERE turn_id = ?", [turn_id])
            db.execute("DELETE FROM turn_events WHERE turn_id = ?", [turn_id])
            db.execute("DELETE FROM turns WHERE id = ?", [turn_id])
            db["scenes"].update(turn.scene_id, {"updated_at": now()})
        self._changed({"kind": "epoch", "story_id": None, "branches": [turn.branch_id]})

    def edit_turn(self, turn_id: int, text: str) -> Turn:
        """Change a line; memory that had read it (versions on this branch at p ≥ its
        index) is dropped so it is synchronized again from an earlier checkpoint."""
        turn = self.turn(turn_id)
        if any(b["fork_point"] >= turn.idx for b in self.child_forks(turn.branch_id)):
            raise ValueError("Forks continue from this line; edit it in a new fork instead.")
        with self.transaction() as db:
            db.execute("UPDATE turns SET text = ?, edited_at = ? WHERE id = ?",
                       [text, now(), turn_id])
            db.execute("DELETE FROM bookmark_versions WHERE branch_id = ? AND p >= ?",
                       [turn.branch_id, turn.idx])
            self._bump_epochs(db, [turn.branch_id])
            db["scenes"].update(turn.scene_id, {"updated_at": now()})
        self._changed({"kind": "epoch", "story_id": None, "branches": [turn.branch_id]})
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

