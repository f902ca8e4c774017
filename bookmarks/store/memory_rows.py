"""Bookmarks, their versions, match decisions and sync costs."""

from __future__ import annotations

from bookmarks.errors import NotFoundError, StaleMemoryError
from bookmarks.memory import resolve_refs
from bookmarks.store.base import StoreBase, Turn, now


def identity_key(text: str) -> str:
    """A bookmark's subject or title as its identity compares it: casefolded, whitespace
    collapsed, surrounding punctuation and quotes dropped ("Harbour gate", "harbour  gate."
    are one bookmark). The identity (story, space, type, subject, title) is unique (m010)."""
    return " ".join((text or "").casefold().split()).strip(" .,;:!?\"'“”‘’")


class MemoryStore(StoreBase):
    def _create_bookmark(self, bm) -> int:
        """The id of the bookmark with `bm`'s identity, created if there is none yet
        (idempotent: a step that lost the race to another gets the winner's row)."""
        subject, title = identity_key(bm.subject), identity_key(bm.title)
        self.db.execute(
            "INSERT INTO bookmarks (story_id, space, subject, type, title, pinned, activation, "
            "created_at, subject_key, title_key) VALUES (?, ?, ?, ?, ?, 0, '', ?, ?, ?) "
            "ON CONFLICT (story_id, space, type, subject_key, title_key) DO NOTHING",
            [bm.story_id, bm.space, bm.subject, bm.type, bm.title, now(), subject, title])
        return self._one("SELECT id FROM bookmarks WHERE story_id = ? AND space = ? AND type = ? "
                         "AND subject_key = ? AND title_key = ?",
                         [bm.story_id, bm.space, bm.type, subject, title])["id"]

    def bookmark_id(self, story_id: int, space: str, kind: str, subject: str,
                    title: str) -> int | None:
        """The id of the bookmark with this identity, if it exists."""
        row = self._one("SELECT id FROM bookmarks WHERE story_id = ? AND space = ? AND type = ? "
                        "AND subject_key = ? AND title_key = ?",
                        [story_id, space, kind, identity_key(subject), identity_key(title)])
        return row["id"] if row else None

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
        # a run's space and its shards' (`space:character`)
        return self._rows("SELECT * FROM sync_costs WHERE story_id = ? AND (space = ? OR space "
                          "LIKE ?) ORDER BY id", [story_id, space, f"{space}:%"])

    def commit_memory(self, writes, *, scene_id: int | None = None,
                      turn: dict | None = None, events: list[dict] | None = None,
                      replace_turn_id: int | None = None,
                      expect_epoch: tuple[int, int] | None = None,
                      changes: int | None = None) -> Turn | None:
        """Write a step's new bookmarks, versions, costs, decisions (and its turn) at once.

        `writes` is a `grounding.MemoryWrites`; new bookmarks (id None) get their ids here.
        `expect_epoch` (branch id, epoch): commit only if nothing that branch's memory may
        read changed since the step read it (see `branch_epoch`); otherwise raise
        StaleMemoryError, writing nothing. `changes` (a branch id): these writes change what
        that branch's memory reads (a card's pinned memory): its epoch moves."""
        with self.transaction() as db:
            if expect_epoch is not None and self._epoch_or_none(expect_epoch[0]) != expect_epoch[1]:
                raise StaleMemoryError(
                    "The scene changed while this step was being prepared (a line was undone "
                    "or edited, presence corrected, characters merged, a bookmark edited or "
                    "pinned, a card brought in, or the scene deleted); nothing was saved.")
            if changes is not None:
                self._bump_epochs(db, [changes])
                self._changed({"kind": "epoch", "story_id": None, "branches": [changes]})
            for bm in writes.new_bookmarks:
                if bm.id is None:
                    bm.id = self._create_bookmark(bm)
                    if bm.pinned or bm.activation:  # a new card or lore bookmark: its flags
                        # belong to the branch its first version is written on
                        branch = next((v.branch_id for v in writes.versions if v.bookmark is bm),
                                      None) or self._trunk_of(bm.story_id)
                        self._override(bm.id, branch, pinned=bm.pinned,
                                       activation=bm.activation or None)
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

    def _epoch_or_none(self, branch_id: int) -> int | None:
        try:
            return self.branch_epoch(branch_id)
        except NotFoundError:
            return None

    def set_bookmark_content(self, bookmark_id: int, branch_id: int, p: int, content,
                             pinned: bool) -> None:
        """A user's edit: a new version at the same sync point, and the pin flag. Both are
        the branch's own (see `set_override`); the branch's epoch moves, so a preparation
        that never saw the edit does not overtake it with a later version."""
        with self.transaction() as db:
            db["bookmark_versions"].insert(
                {"bookmark_id": bookmark_id, "branch_id": branch_id, "p": p,
                 "content": content.model_dump_json(), "turn_id": None, "created_at": now()})
            self._override(bookmark_id, branch_id, pinned=pinned, activation=None)
            self._bump_epochs(db, [branch_id])
            self._changed({"kind": "epoch", "story_id": None, "branches": [branch_id]})

    def set_bookmark_flags(self, bookmark_id: int, *, pinned: bool, activation: str,
                           branch_id: int | None = None) -> None:
        """Pin a bookmark and set how it grounds unproposed ("self", "keys", "always"), for
        one branch (a scene and its forks) — or, without `branch_id`, story-wide (the
        trunk): a writer's explicit choice for every scene."""
        branch = branch_id if branch_id is not None else \
            self._trunk_of(self.bookmark(bookmark_id)["story_id"])
        self.set_override(bookmark_id, branch, pinned=pinned, activation=activation)

    def set_override(self, bookmark_id: int, branch_id: int, *, pinned: bool | None = None,
                     activation: str | None = None) -> None:
        """This branch's own pin or activation of a bookmark (None: leave it as it is). It
        changes what memory on the branch reads: the branch's epoch moves."""
        with self.transaction() as db:
            self._override(bookmark_id, branch_id, pinned=pinned, activation=activation)
            self._bump_epochs(db, [branch_id])
            self._changed({"kind": "epoch", "story_id": None, "branches": [branch_id]})

    def _override(self, bookmark_id: int, branch_id: int, *, pinned: bool | None,
                  activation: str | None) -> None:
        self.db.execute(
            "INSERT INTO bookmark_overrides (bookmark_id, branch_id, pinned, activation, "
            "created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (bookmark_id, branch_id) DO UPDATE "
            "SET pinned = COALESCE(excluded.pinned, pinned), activation = "
            "COALESCE(excluded.activation, activation)",
            [bookmark_id, branch_id, None if pinned is None else int(pinned), activation, now()])

    def branch_overrides(self, branch_id: int) -> list[dict]:
        """Every pin and activation this branch set itself."""
        return self._rows("SELECT * FROM bookmark_overrides WHERE branch_id = ? ORDER BY "
                          "bookmark_id", [branch_id])

    def drop_branch_memory(self, branch_id: int, bookmark_ids: list[int], p: int) -> None:
        """Take back what a branch wrote itself for these bookmarks at point p (a card's
        memory, detached): those versions and the branch's own flags go, its epoch moves."""
        if not bookmark_ids:
            return
        q = ",".join("?" * len(bookmark_ids))
        with self.transaction() as db:
            db.execute(f"DELETE FROM bookmark_versions WHERE branch_id = ? AND p = ? AND "
                       f"bookmark_id IN ({q})", [branch_id, p, *bookmark_ids])
            db.execute(f"DELETE FROM bookmark_overrides WHERE branch_id = ? AND bookmark_id IN "
                       f"({q})", [branch_id, *bookmark_ids])
            self._bump_epochs(db, [branch_id])
            self._changed({"kind": "epoch", "story_id": None, "branches": [branch_id]})

    def overrides(self, bookmark_ids: list[int], branch_ids: list[int]) -> list[dict]:
        """Pins and activations set on these branches for these bookmarks."""
        if not bookmark_ids or not branch_ids:
            return []
        bq, rq = ",".join("?" * len(bookmark_ids)), ",".join("?" * len(branch_ids))
        return self._rows(f"SELECT * FROM bookmark_overrides WHERE bookmark_id IN ({bq}) AND "
                          f"branch_id IN ({rq})", [*bookmark_ids, *branch_ids])

    def _trunk_of(self, story_id: int) -> int:
        row = self._one("SELECT id FROM branches WHERE story_id = ? AND parent_id IS NULL",
                        [story_id])
        if row is None:
            raise NotFoundError(f"There is no story with id {story_id}.")
        return row["id"]

    def bookmark(self, bookmark_id: int) -> dict:
        row = self._one("SELECT * FROM bookmarks WHERE id = ?", [bookmark_id])
        if row is None:
            raise NotFoundError(f"There is no bookmark with id {bookmark_id}.")
        return row

