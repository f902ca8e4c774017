"""Stories, characters, actions and questions."""

from __future__ import annotations

import json
import logging

from bookmarks.errors import BookmarksError, NotFoundError
from bookmarks.store.base import StoreBase, StoryInfo, now
from bookmarks.stories.presence import RULES as PRESENCE_RULES
from bookmarks.stories.source_view import around
from bookmarks.stories.story import NARRATION, Action, Character, Question, Story
from bookmarks.stories.story_export import whole_story

log = logging.getLogger(__name__)


class StoriesStore(StoreBase):
    # -- stories --------------------------------------------------------------
    def add_story(self, story: Story) -> int:
        with self.transaction() as db:
            story_id = db["stories"].insert(
                {"title": story.title, "description": story.description,
                 "author": story.author, "source_format": story.source_format,
                 "n_actions": len(story.actions), "created_at": now(), "last_used_at": None,
                 "presence_rules": PRESENCE_RULES}
            ).last_pk
            db["characters"].insert_all(
                {"story_id": story_id, "name": c.name, "aliases": json.dumps(c.aliases),
                 "major": int(c.major)} for c in story.characters
            )
            db["actions"].insert_all(
                ({"story_id": story_id, "idx": a.index, "character": a.character,
                  "text": a.text, "chapter": a.chapter, "check_reason": a.check, "line": a.line}
                 for a in story.actions),
                batch_size=2000,
            )
            if story.source is not None:
                db["story_sources"].insert({"story_id": story_id, "text": story.source})
            db["questions"].insert_all(
                {"story_id": story_id, "qid": q.id, "after": q.after,
                 "character": q.character, "question": q.question,
                 "options": json.dumps(q.options), "answer": q.answer,
                 "evidence": json.dumps(q.evidence), "witnessed": int(q.witnessed),
                 "omniscient_answer": q.omniscient_answer} for q in story.questions
            )
            db["branches"].insert({"story_id": story_id, "parent_id": None, "fork_point": 0,
                                   "name": "trunk", "created_at": now()})
            from bookmarks.stories.presence import PROSE, Reads, corrections, derive, to_ranges

            reads = Reads(story.characters)  # kept for the writer's first correction
            prose = story.source_format in PROSE
            per_action = derive(story.actions, story.characters, reads, prose)
            if any(a.present is not None for a in story.actions):  # a JSONL's presence, with
                # the writer's corrections: kept as marks, so a later derivation keeps them
                bare = [a.model_copy(update={"present": None}) for a in story.actions]
                db["presence_marks"].insert_all(
                    {"story_id": story_id, "character": name, "first": a, "last": b,
                     "present": int(present)}
                    for name, a, b, present in corrections(per_action,
                                                           derive(bare, story.characters, reads, prose)))
            self._write_presence(story_id, to_ranges(per_action))
        self._reads = (story_id, reads)
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

    # -- presence: who could perceive each action ---------------------------------------
    def presence(self, story_id: int) -> dict[str, list[tuple[int, int]]]:
        """Per character, the runs of trunk actions they were present for (derived on
        first use for stories imported before presence existed)."""
        out = self._stored_presence(story_id)
        if not out and self.story(story_id).n_actions:
            self.derive_presence(story_id)
            out = self._stored_presence(story_id)
        return out

    def _stored_presence(self, story_id: int) -> dict[str, list[tuple[int, int]]]:
        out: dict[str, list[tuple[int, int]]] = {}
        for r in self._rows("SELECT character, first, last FROM presence WHERE story_id = ? "
                            "ORDER BY character, first", [story_id]):
            out.setdefault(r["character"], []).append((r["first"], r["last"]))
        return out

    def derive_presence(self, story_id: int) -> None:
        """Presence from the storyline, then the writer's corrections on top, in order."""
        self._write_presence(story_id, self._derived(story_id))

    def _derived(self, story_id: int) -> dict[str, list[tuple[int, int]]]:
        from bookmarks.stories.presence import PROSE, Reads, derive, to_ranges, with_corrections

        cast = self.characters(story_id)
        kept = self._reads  # one story's: the one a writer is correcting
        reads = kept[1].fitting(cast) if kept and kept[0] == story_id else Reads(cast)
        self._reads = (story_id, reads)
        prose = self.story(story_id).source_format in PROSE
        ranges = to_ranges(derive(self.actions(story_id), cast, reads, prose))
        return with_corrections(ranges, self.presence_marks(story_id))

    def refresh_presence(self) -> dict[int, list[str]]:
        """Every story whose presence was derived under older presence rules
        (`presence.RULES`) is read again under the current ones, the writer's corrections
        on top, each in one transaction; where someone's presence changed, the memory of
        witnessed knowledge that read it is dropped, as after a correction. Returns, per
        story read again, the characters whose presence changed."""
        stale = [r["id"] for r in self._rows(
            "SELECT id FROM stories WHERE presence_rules < ? ORDER BY id", [PRESENCE_RULES])]
        changed: dict[int, list[str]] = {}
        for story_id in stale:
            info = self.story(story_id)
            log.info("reading who is present in story %d (%r, %d actions) again under the current "
                     "presence rules", story_id, info.title, info.n_actions)
            ranges = {k: v for k, v in self._derived(story_id).items() if v}
            with self.transaction() as db:
                if self.story(story_id).presence_rules >= PRESENCE_RULES:
                    continue  # read again meanwhile (another process)
                before = self._stored_presence(story_id)
                if ranges != before:
                    self._write_presence(story_id, ranges)
                    self._presence_changed(story_id, before)
                db["stories"].update(story_id, {"presence_rules": PRESENCE_RULES})
            changed[story_id] = sorted(k for k in set(before) | set(ranges)
                                       if before.get(k) != ranges.get(k))
        return changed

    def presence_marks(self, story_id: int) -> list[tuple[str, int, int, bool]]:
        """The writer's presence corrections of a story, in the order made."""
        return [(r["character"], r["first"], r["last"], bool(r["present"])) for r in self._rows(
            "SELECT * FROM presence_marks WHERE story_id = ? ORDER BY id", [story_id])]

    def _write_presence(self, story_id: int, ranges: dict[str, list[tuple[int, int]]]) -> None:
        with self.transaction() as db:
            db.execute("DELETE FROM presence WHERE story_id = ?", [story_id])
            db["presence"].insert_all(
                {"story_id": story_id, "character": name, "first": a, "last": b}
                for name, runs in ranges.items() for a, b in runs)

    def mark_presence(self, story_id: int, character: str, first: int, last: int,
                      present: bool) -> None:
        """A writer's correction: `character` present (or not) for actions first..last.
        Memory of witnessed knowledge that read those actions is dropped (see
        `witnessed_space`), so it is synchronized again with the new presence."""
        from bookmarks.stories.presence import set_range

        ranges = self.presence(story_id)
        before = {k: list(v) for k, v in ranges.items()}
        ranges[character] = set_range(ranges.get(character, []), first, last, present)
        with self.transaction() as db:
            db["presence_marks"].insert({"story_id": story_id, "character": character, "first": first,
                                         "last": last, "present": int(present)})
            self._write_presence(story_id, {k: v for k, v in ranges.items() if v})
            self._presence_changed(story_id, before)

    def _presence_changed(self, story_id: int, before: dict[str, list[tuple[int, int]]]) -> None:
        """Inside a transaction, after presence was rewritten: every knower's memory that
        may have read an action whose presence changed for them (versions at p ≥ the first
        such action, in every space of that knower: Play's and evaluations') is dropped,
        and the story's epoch moves, so nothing prepared or in flight under the old
        presence is used or saved (see `branch_epoch`)."""
        after = self.presence(story_id)
        for name in set(before) | set(after):
            seen_before = {i for a, b in before.get(name, []) for i in range(a, b + 1)}
            seen_after = {i for a, b in after.get(name, []) for i in range(a, b + 1)}
            changed = seen_before ^ seen_after
            if changed:
                self.db.execute(
                    "DELETE FROM bookmark_versions WHERE p >= ? AND bookmark_id IN (SELECT id "
                    "FROM bookmarks WHERE story_id = ? AND substr(space, -?) = ?)",
                    [min(changed), story_id, len(name) + 1, f"@{name}"])
        self._story_changed(story_id)

    def _story_changed(self, story_id: int) -> None:
        """Inside a transaction: something every branch of the story may have read changed
        (the trunk's epoch moves; listeners hear of it once the transaction commits)."""
        trunk = self.story(story_id).trunk_id
        self._bump_epochs(self.db, [trunk])
        self._changed({"kind": "epoch", "story_id": story_id, "branches": [trunk]})

    def first_appearances(self, story_id: int) -> dict[str, int]:
        """Each character's first action on the story's storyline (index)."""
        return {r["character"]: r["first"] for r in self._rows(
            "SELECT character, MIN(idx) AS first FROM actions WHERE story_id = ? GROUP BY character",
            [story_id])}

    def action_counts(self, story_id: int) -> dict[str, int]:
        return {
            r["character"]: r["n"]
            for r in self._rows("SELECT character, COUNT(*) AS n FROM actions "
                                "WHERE story_id = ? GROUP BY character ORDER BY n DESC",
                                [story_id])
        }

    def check_reasons(self, story_id: int) -> dict[str, int]:
        """How many lines the import marked for checking who speaks them (Action.check), by
        why: {reason: lines}, the most frequent reason first."""
        return {r["check_reason"]: r["n"] for r in self._rows(
            "SELECT check_reason, COUNT(*) AS n FROM actions WHERE story_id = ? AND check_reason "
            "IS NOT NULL GROUP BY check_reason ORDER BY n DESC, check_reason", [story_id])}

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
                   chapter=r["chapter"], check=r["check_reason"], line=r["line"])
            for r in self._rows("SELECT * FROM actions WHERE story_id = ? AND idx BETWEEN ? "
                                "AND ? ORDER BY idx", [story_id, start, end])
        ]

    def source(self, story_id: int) -> str | None:
        """The text of the file the story was read from; None when it was not kept (JSON
        formats without their `.source.txt`, a scene's own story, a story imported before
        the app kept files)."""
        row = self._one("SELECT text FROM story_sources WHERE story_id = ?", [story_id])
        return None if row is None else row["text"]

    def source_around(self, story_id: int, index: int) -> list[tuple[int, str, bool]]:
        """Action `index` where it stands in the file its story was read from: (file line,
        text, whether it is the action's own) — see stories/source_view.py; empty when the
        file's text was not kept."""
        if (text := self.source(story_id)) is None:
            return []
        starts = {a.index: a.line for a in self.actions(story_id, max(1, index - 1), index + 2)}
        return around(text.split("\n"), starts, index)

    def stored_story(self, story_id: int) -> Story:
        """The story as the store holds it now, to export: cast with aliases, every action
        (where it starts in the source file too), questions, presence with the writer's
        corrections, and the source file's text where it was kept."""
        info = self.story(story_id)
        return whole_story(title=info.title, author=info.author, description=info.description,
                           source_format=info.source_format, characters=self.characters(story_id),
                           actions=self.actions(story_id), presence=self.presence(story_id),
                           questions=self.questions(story_id), source=self.source(story_id))

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
                     answer=r["answer"], evidence=json.loads(r["evidence"] or "[]"),
                     witnessed=bool(r.get("witnessed")),
                     omniscient_answer=r.get("omniscient_answer"))
            for r in self._rows("SELECT * FROM questions WHERE story_id = ? ORDER BY after, "
                                "qid", [story_id])
        ]

    def merge_characters(self, story_id: int, keep: str, merge: str) -> None:
        """Fold character `merge` into `keep`: its actions and name become `keep`'s. Memory
        that read those actions (versions from the first of them on) is dropped, as after an
        edit; presence is derived again, memory that read under the old presence dropped, and
        the story's epoch moves (see `_presence_changed`)."""
        before = self.presence(story_id)
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
            first = self._one("SELECT MIN(idx) AS i FROM actions WHERE story_id = ? AND "
                              "character = ?", [story_id, merge])["i"]
            if first is not None:  # those actions now read otherwise ("Keep: …"): like an
                # edit, memory that read them goes (every space, from the first of them)
                db.execute("DELETE FROM bookmark_versions WHERE p >= ? AND bookmark_id IN "
                           "(SELECT id FROM bookmarks WHERE story_id = ?)", [first, story_id])
            db.execute("UPDATE actions SET character = ? WHERE story_id = ? AND character = ?",
                       [keep, story_id, merge])
            db["characters"].delete(rows[merge]["id"])
            db.execute("UPDATE presence_marks SET character = ? WHERE story_id = ? AND character = ?",
                       [keep, story_id, merge])  # the writer's corrections of either stay
            self.derive_presence(story_id)  # names and speakers changed
            self._presence_changed(story_id, before)

    def correct_line(self, story_id: int, index: int, speaker: str,
                     text: str | None = None) -> str:
        """Give storyline action `index` to `speaker` — a character's name or alias, a new
        name (a character joins the cast) or "narration" — and, when `text` is given, that
        text. Returns the name the line now has. As after a merge, memory that read the
        line (versions from `index` on) is dropped, presence is derived again and the
        story's epoch moves, so nothing prepared under the old line is used or saved."""
        speaker = " ".join((speaker or "").split())
        if not speaker:
            raise BookmarksError("Name the line's speaker (a character, a new name, or "
                                 f"“{NARRATION}”).")
        if text is not None and not text.strip():
            raise BookmarksError("A line's text cannot be empty.")
        before = self.presence(story_id)
        with self.transaction() as db:
            n = self.story(story_id).n_actions
            row = self._one("SELECT character, text FROM actions WHERE story_id = ? AND "
                            "idx = ?", [story_id, index])
            if row is None:
                raise NotFoundError(f"The story has no action {index}: its actions are "
                                    f"numbered 1 to {n}.")
            name = NARRATION if speaker.casefold() == NARRATION else None
            for r in self._rows("SELECT * FROM characters WHERE story_id = ?", [story_id]):
                if name is None and speaker.casefold() in {
                        x.casefold() for x in [r["name"], *json.loads(r["aliases"] or "[]")]}:
                    name = r["name"]
            if name is None:  # a new name: a character of the story from now on
                db["characters"].insert({"story_id": story_id, "name": speaker,
                                         "aliases": "[]", "major": 0})
                name = speaker
            new_text = row["text"] if text is None else text.strip()
            if (name, new_text) == (row["character"], row["text"]):
                db.execute("UPDATE actions SET check_reason = NULL WHERE story_id = ? AND "
                           "idx = ?", [story_id, index])  # the writer confirmed it
                return name  # nothing else changes: memory stays
            db.execute("UPDATE actions SET character = ?, text = ?, check_reason = NULL "
                       "WHERE story_id = ? AND idx = ?", [name, new_text, story_id, index])
            db.execute("DELETE FROM bookmark_versions WHERE p >= ? AND bookmark_id IN "
                       "(SELECT id FROM bookmarks WHERE story_id = ?)", [index, story_id])
            self.derive_presence(story_id)  # speakers changed
            self._presence_changed(story_id, before)
        return name

    def story_runs(self, story_id: int) -> dict[str, int]:
        """What evaluation and the arena hold of a story: {"runs", "arena_items"}."""
        runs = self._one("SELECT COUNT(*) AS n FROM eval_runs WHERE story_id = ?", [story_id])
        items = self._one("SELECT COUNT(*) AS n FROM arena_items WHERE start_id IN (SELECT id "
                          "FROM arena_starts WHERE story_id = ?)", [story_id])
        return {"runs": runs["n"] if runs else 0, "arena_items": items["n"] if items else 0}

    def delete_story(self, story_id: int, *, keep_runs: bool = False) -> dict[str, int]:
        """Delete a story with its scenes, memory, and its evaluation and arena runs
        (returned as counts). `keep_runs=True` refuses, saying why, when it has runs: they
        cannot outlive their story. Listeners hear of it (background work stops)."""
        info = self.story(story_id)
        held = self.story_runs(story_id)
        if keep_runs and any(held.values()):
            from bookmarks.errors import BookmarksError

            raise BookmarksError(
                f"“{info.title}” has {held['runs']} evaluation run(s) and {held['arena_items']} "
                "arena item(s), which cannot outlive their story. Export them first "
                "(bookmarks eval export RUN, bookmarks arena export), then delete the story "
                "with its runs.")
        with self.transaction() as db:
            scene_ids = "SELECT id FROM scenes WHERE story_id = ?"
            turn_ids = f"SELECT id FROM turns WHERE scene_id IN ({scene_ids})"
            bm_ids = "SELECT id FROM bookmarks WHERE story_id = ?"
            run_ids = "SELECT id FROM eval_runs WHERE story_id = ?"
            items = "SELECT id FROM arena_items WHERE start_id IN (SELECT id FROM arena_starts " \
                    "WHERE story_id = ?)"
            tables = set(db.table_names())
            arena = [f"DELETE FROM {t} WHERE item_id IN ({items})"
                     for t in ("campaign_assignments", "campaign_items", "judgments",
                               "arena_views") if t in tables]
            for sql in (
                f"DELETE FROM eval_records WHERE run_id IN ({run_ids})",
                "DELETE FROM eval_runs WHERE story_id = ?",
                *arena,
                f"DELETE FROM arena_items WHERE id IN ({items})",
                "DELETE FROM arena_starts WHERE story_id = ?",
                f"DELETE FROM turn_events WHERE turn_id IN ({turn_ids})",
                f"DELETE FROM turns WHERE scene_id IN ({scene_ids})",
                "DELETE FROM scenes WHERE story_id = ?",
                f"DELETE FROM bookmark_versions WHERE bookmark_id IN ({bm_ids})",
                f"DELETE FROM bookmark_overrides WHERE bookmark_id IN ({bm_ids})",
                "DELETE FROM sync_costs WHERE story_id = ?",
                "DELETE FROM match_decisions WHERE story_id = ?",
                "DELETE FROM bookmarks WHERE story_id = ?",
                "UPDATE branches SET parent_id = NULL WHERE story_id = ?",
                "DELETE FROM branches WHERE story_id = ?",
                "DELETE FROM questions WHERE story_id = ?",
                "DELETE FROM presence WHERE story_id = ?",
                "DELETE FROM presence_marks WHERE story_id = ?",
                "DELETE FROM story_sources WHERE story_id = ?",
                "DELETE FROM actions WHERE story_id = ?",
                "DELETE FROM characters WHERE story_id = ?",
                "DELETE FROM stories WHERE id = ?",
            ):
                db.execute(sql, [story_id])
            self._changed({"kind": "story_deleted", "story_id": story_id})
        return held
