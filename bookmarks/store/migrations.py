"""Database schema as numbered sqlite-utils migrations.

Never edit a migration once it has shipped: add `m00N_…` instead. Each migration and
its record run in one transaction (sqlite-utils ≥ 4), so a failed one stays pending.
"""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

migrations = Migrations("bookmarks")


@migrations()
def m001_initial(db: Database) -> None:
    db["stories"].create(
        {"id": int, "title": str, "description": str, "author": str, "source_format": str,
         "n_actions": int, "created_at": str, "last_used_at": str},
        pk="id", not_null={"title", "n_actions", "created_at"},
    )
    db["characters"].create(
        # aliases: JSON list of other names the character is mentioned by
        {"id": int, "story_id": int, "name": str, "aliases": str, "major": int},
        pk="id", foreign_keys=[("story_id", "stories", "id")], not_null={"story_id", "name"},
    )
    db["characters"].create_index(["story_id", "name"], unique=True)
    db["actions"].create(
        # idx: 1-based position in the trunk storyline
        {"story_id": int, "idx": int, "character": str, "text": str, "chapter": str},
        pk=("story_id", "idx"), foreign_keys=[("story_id", "stories", "id")],
        not_null={"character", "text"},
    )
    db["questions"].create(
        {"story_id": int, "qid": str, "after": int, "character": str, "question": str,
         "options": str, "answer": str, "evidence": str},
        pk=("story_id", "qid"), foreign_keys=[("story_id", "stories", "id")],
    )
    db["branches"].create(
        # A branch continues its parent's storyline after fork_point (an index on the
        # parent's lineage). The trunk is the imported narrative: parent_id NULL.
        {"id": int, "story_id": int, "parent_id": int, "fork_point": int, "name": str,
         "created_at": str},
        pk="id", foreign_keys=[("story_id", "stories", "id"), ("parent_id", "branches", "id")],
        not_null={"story_id", "fork_point"},
    )
    db["scenes"].create(
        # cast and settings: JSON; branch_id: the branch this scene's turns extend
        {"id": int, "story_id": int, "branch_id": int, "title": str, "start_point": int,
         "cast": str, "setting": str, "method": str, "settings": str,
         "created_at": str, "updated_at": str},
        pk="id", foreign_keys=[("story_id", "stories", "id"), ("branch_id", "branches", "id")],
        not_null={"story_id", "branch_id", "start_point"},
    )
    db["turns"].create(
        # idx: storyline index of this action on its branch (start_point + 1, + 2, …)
        {"id": int, "scene_id": int, "branch_id": int, "idx": int, "character": str,
         "text": str, "source": str, "method": str, "created_at": str},
        pk="id", foreign_keys=[("scene_id", "scenes", "id"), ("branch_id", "branches", "id")],
        not_null={"branch_id", "idx", "character", "text", "source"},
    )
    db["turns"].create_index(["branch_id", "idx"], unique=True)
    db["turn_events"].create(
        {"id": int, "turn_id": int, "seq": int, "kind": str, "payload": str},
        pk="id", foreign_keys=[("turn_id", "turns", "id")], not_null={"turn_id", "kind"},
    )
    db["bookmarks"].create(
        # subject: the entity or character the section is about; type: concept|state|
        # behavioral; pinned: the user's text is kept and built upon by syncs
        {"id": int, "story_id": int, "subject": str, "type": str, "title": str,
         "pinned": int, "created_at": str},
        pk="id", foreign_keys=[("story_id", "stories", "id")],
        not_null={"story_id", "subject", "type", "title"},
    )
    db["bookmark_versions"].create(
        # immutable: a sync writes a new row (bookmark, branch, p, content)
        {"id": int, "bookmark_id": int, "branch_id": int, "p": int, "content": str,
         "turn_id": int, "created_at": str},
        pk="id",
        foreign_keys=[("bookmark_id", "bookmarks", "id"), ("branch_id", "branches", "id")],
        not_null={"bookmark_id", "branch_id", "p", "content"},
    )
    db["bookmark_versions"].create_index(["bookmark_id", "branch_id", "p"])
    db["llm_calls"].create(
        # append-only audit log of model calls; never rolled back with a turn
        {"id": int, "created_at": str, "role": str, "purpose": str, "model": str,
         "base_url": str, "prompt_tokens": int, "completion_tokens": int,
         "latency_ms": float, "ok": int, "error": str, "cached": int,
         "scene_id": int, "bookmark_id": int},
        pk="id",
    )
    db["llm_cache"].create(
        # only validated replies are stored here
        {"key": str, "model": str, "response": str, "created_at": str}, pk="key",
    )
    db["settings"].create({"key": str, "value": str}, pk="key")


@migrations()
def m002_memory_spaces_and_costs(db: Database) -> None:
    # space: a memory namespace within a story. Scenes share "story"; an evaluation walk
    # gets its own space so it starts with empty memory and never mixes with play.
    db["bookmarks"].add_column("space", str, not_null_default="story")
    db["bookmarks"].create_index(["story_id", "space", "type", "subject"])
    db["match_decisions"].create(
        # the memory model's reuse/new answer for (proposal, candidate), asked once
        {"story_id": int, "space": str, "proposal": str, "bookmark_id": int, "decision": str},
        pk=("story_id", "space", "proposal", "bookmark_id"),
    )
    db["sync_costs"].create(
        # one row per synchronization; *_wo: the counterfactual cost without reuse
        # (the same section synchronized from p = 0), estimated as described in sync.py
        {"id": int, "story_id": int, "space": str, "branch_id": int, "bookmark_id": int,
         "turn_id": int, "method": str, "type": str, "position": int, "story_length": int,
         "p_old": int, "p_new": int, "actions_read": int, "calls": int,
         "prompt_tokens": int, "completion_tokens": int, "actions_read_wo": int,
         "calls_wo": float, "prompt_tokens_wo": float, "completion_tokens_wo": float,
         "created_at": str},
        pk="id",
    )
    db["sync_costs"].create_index(["story_id", "space"])


@migrations()
def m003_evaluation_and_arena(db: Database) -> None:
    db["eval_runs"].create(
        # kind: nap | mcq; space: the run's own memory space (so a resumed run continues
        # with the memory it had); params and summary: JSON
        {"id": int, "kind": str, "story_id": int, "method": str, "params": str, "space": str,
         "status": str, "summary": str, "created_at": str, "finished_at": str},
        pk="id", foreign_keys=[("story_id", "stories", "id")],
    )
    db["eval_records"].create(
        {"id": int, "run_id": int, "item_key": str, "payload": str, "created_at": str},
        pk="id", foreign_keys=[("run_id", "eval_runs", "id")],
    )
    db["eval_records"].create_index(["run_id", "item_key"], unique=True)
    db["arena_starts"].create(
        # a shared starting scene: story point, cast, setting and the first line
        {"id": int, "story_id": int, "point": int, "characters": str, "setting": str,
         "first_speaker": str, "first_line": str, "created_at": str},
        pk="id", foreign_keys=[("story_id", "stories", "id")],
    )
    db["arena_items"].create(
        # one start continued by two methods; each continuation is a stored scene
        {"id": int, "start_id": int, "method_a": str, "method_b": str, "scene_a": int,
         "scene_b": int, "turns": int, "created_at": str},
        pk="id", foreign_keys=[("start_id", "arena_starts", "id")],
    )
    db["arena_views"].create(
        # which method was shown on the left to this annotator (randomized, stored)
        {"id": int, "item_id": int, "annotator": str, "left_method": str, "right_method": str,
         "shown_at": str},
        pk="id", foreign_keys=[("item_id", "arena_items", "id")],
    )
    db["arena_views"].create_index(["item_id", "annotator"], unique=True)
    db["judgments"].create(
        # append-only vote log; vote: left | right | tie | both_bad | skip;
        # source: human | llm (an LLM judge votes as annotator "llm:<order>")
        {"id": int, "item_id": int, "annotator": str, "left_method": str,
         "right_method": str, "vote": str, "rationale": str, "seconds": float,
         "source": str, "created_at": str},
        pk="id", foreign_keys=[("item_id", "arena_items", "id")],
    )
    db["judgments"].create_index(["item_id", "annotator"], unique=True)


@migrations()
def m004_branch_epochs(db: Database) -> None:
    # epoch: bumped whenever a line of the branch is removed or changed (undo, regenerate,
    # edit). Memory grounded in the background commits only if the epoch it read is still
    # current, so it never re-inserts a version that read a line that is gone.
    db["branches"].add_column("epoch", int, not_null_default=0)


@migrations()
def m005_turn_edits(db: Database) -> None:
    # edited_at: when a writer last changed the line (shown as "edited")
    db["turns"].add_column("edited_at", str)


@migrations()
def m006_presence(db: Database) -> None:
    # who could perceive the trunk's actions: runs of action indices per character
    # (derived at import from the storyline, editable by the writer)
    db["presence"].create({"story_id": int, "character": str, "first": int, "last": int},
                          foreign_keys=[("story_id", "stories", "id")])
    db["presence"].create_index(["story_id", "character", "first"])


@migrations()
def m007_witnessed_questions(db: Database) -> None:
    # a "witnessed" question asks about something the character did not see: `answer` is
    # right for what they know, `omniscient_answer` for someone who saw everything
    db["questions"].add_column("witnessed", int, not_null_default=0)
    db["questions"].add_column("omniscient_answer", str)


@migrations()
def m008_bookmark_activation(db: Database) -> None:
    # activation: how a bookmark brought in from a character card or a lorebook grounds
    # without being proposed: "self" (when its subject acts), "keys" (when one of its keys
    # is mentioned in the scene, as SillyTavern's World Info does), "always"; "" otherwise
    db["bookmarks"].add_column("activation", str, not_null_default="")


@migrations()
def m009_users_roles_and_campaigns(db: Database) -> None:
    # accounts: role owner | writer | annotator; password_hash: scrypt (see store/users.py)
    db["users"].create({"name": str, "role": str, "password_hash": str, "created_at": str,
                        "last_seen_at": str}, pk="name", not_null={"role", "password_hash"})
    # the writer who made a scene (scenes made before accounts, or by the owner: none)
    db.execute("CREATE TABLE scene_owners (scene_id INTEGER PRIMARY KEY REFERENCES scenes(id) "
               "ON DELETE CASCADE, owner TEXT NOT NULL)")
    db["campaigns"].create(
        # status: open | closed (a closed campaign takes no votes); k: annotators per item;
        # params: JSON (story, methods, turns, where the starts came from, the judge)
        {"id": int, "name": str, "status": str, "k": int, "randomize": int, "params": str,
         "created_by": str, "created_at": str, "closed_at": str},
        pk="id", not_null={"name", "status", "k"})
    db["campaign_items"].create(
        {"campaign_id": int, "item_id": int, "position": int}, pk=("campaign_id", "item_id"),
        foreign_keys=[("campaign_id", "campaigns", "id"), ("item_id", "arena_items", "id")])
    db["campaign_assignments"].create(
        # position: this item's place in this annotator's (randomized) order
        {"campaign_id": int, "annotator": str, "item_id": int, "position": int},
        pk=("campaign_id", "annotator", "item_id"),
        foreign_keys=[("campaign_id", "campaigns", "id"), ("item_id", "arena_items", "id")])
    db["campaign_assignments"].create_index(["annotator"])
    # the campaign a vote was cast in (votes outside a campaign: NULL)
    db["judgments"].add_column("campaign_id", int)


def _m010_key(text: str) -> str:
    # frozen copy of `memory_rows.identity_key` as it was when m010 shipped
    return " ".join((text or "").casefold().split()).strip(" .,;:!?\"'“”‘’")


@migrations()
def m010_bookmark_identity(db: Database) -> None:
    # A bookmark's identity is (story, space, type, subject, title), subject and title
    # compared normalized (casefolded, whitespace collapsed, surrounding punctuation and
    # quotes dropped; see `memory_rows.identity_key`). It is unique, so creating a bookmark
    # is idempotent: two steps proposing the same section at once (a background preparation
    # and a turn, or two preparations) get the same row. Existing duplicates are merged into
    # the oldest row: their versions, costs and match decisions move to it.
    db["bookmarks"].add_column("subject_key", str, not_null_default="")
    db["bookmarks"].add_column("title_key", str, not_null_default="")
    keep: dict[tuple, int] = {}
    merged: list[tuple[int, int]] = []  # (duplicate id, kept id)
    for row in db.query("SELECT id, story_id, space, type, subject, title, pinned, activation "
                        "FROM bookmarks ORDER BY id"):
        subject, title = _m010_key(row["subject"]), _m010_key(row["title"])
        db.execute("UPDATE bookmarks SET subject_key = ?, title_key = ? WHERE id = ?",
                   [subject, title, row["id"]])
        ident = (row["story_id"], row["space"], row["type"], subject, title)
        if ident in keep:
            merged.append((row["id"], keep[ident]))
        else:
            keep[ident] = row["id"]
    for dup, kept in merged:
        for table in ("bookmark_versions", "sync_costs"):
            db.execute(f"UPDATE {table} SET bookmark_id = ? WHERE bookmark_id = ?", [kept, dup])
        db.execute("INSERT OR IGNORE INTO match_decisions (story_id, space, proposal, bookmark_id, "
                   "decision) SELECT story_id, space, proposal, ?, decision FROM match_decisions "
                   "WHERE bookmark_id = ?", [kept, dup])
        db.execute("DELETE FROM match_decisions WHERE bookmark_id = ?", [dup])
        db.execute("UPDATE bookmarks SET pinned = MAX(pinned, (SELECT pinned FROM bookmarks WHERE "
                   "id = ?)), activation = CASE WHEN activation = '' THEN (SELECT activation FROM "
                   "bookmarks WHERE id = ?) ELSE activation END WHERE id = ?", [dup, dup, kept])
        db.execute("DELETE FROM bookmarks WHERE id = ?", [dup])
    db["bookmarks"].create_index(["story_id", "space", "type", "subject_key", "title_key"],
                                 unique=True, index_name="bookmark_identity")


@migrations()
def m011_scoped_overrides_and_cache_costs(db: Database) -> None:
    # A pin or a card's "self"/"keys"/"always" activation belongs to a branch: the scene
    # that set it (and its forks), or the trunk for a writer's explicit story-wide choice —
    # never silently to every scene through the shared bookmark row. On a lineage the
    # nearest branch's override wins (NULL: says nothing, the next one up decides).
    # The flags `bookmarks.pinned`/`activation` were story-wide; they become overrides on
    # the branch of the bookmark's first version (a card attached to a scene: that scene;
    # shared memory: the trunk, as before) and stay 0/'' from now on.
    db["bookmark_overrides"].create(
        {"bookmark_id": int, "branch_id": int, "pinned": int, "activation": str,
         "created_at": str},
        pk=("bookmark_id", "branch_id"),
        foreign_keys=[("bookmark_id", "bookmarks", "id"), ("branch_id", "branches", "id")])
    for row in db.query("SELECT b.id, b.pinned, b.activation, b.story_id, (SELECT v.branch_id "
                        "FROM bookmark_versions v WHERE v.bookmark_id = b.id ORDER BY v.id "
                        "LIMIT 1) AS first_branch, (SELECT t.id FROM branches t WHERE "
                        "t.story_id = b.story_id AND t.parent_id IS NULL) AS trunk FROM "
                        "bookmarks b WHERE b.pinned != 0 OR b.activation != ''"):
        branch = row["first_branch"] or row["trunk"]
        if branch is not None:
            db["bookmark_overrides"].insert(
                {"bookmark_id": row["id"], "branch_id": branch, "pinned": row["pinned"],
                 "activation": row["activation"], "created_at": ""}, replace=True)
    db.execute("UPDATE bookmarks SET pinned = 0, activation = ''")
    # a cached reply keeps what it cost when the model made it: cost figures count what the
    # model would have to do (a cache hit is counted at that cost, and shown apart)
    db["llm_cache"].add_column("prompt_tokens", int, not_null_default=0)
    db["llm_cache"].add_column("completion_tokens", int, not_null_default=0)


@migrations()
def m012_action_check(db: Database) -> None:
    # why a writer should check who speaks an imported line (the rules attributed it
    # without a tag naming the speaker; see stories/attribution_check.py); NULL when the
    # rules were sure, the format named the speaker, or a writer corrected the line
    db["actions"].add_column("check_reason", str)


@migrations()
def m013_presence_marks(db: Database) -> None:
    # a writer's presence corrections (Library → Who is present), in the order made, and
    # those a re-imported JSONL carries: applied again each time presence is derived anew
    # (after a line's correction or a merge), so that none is lost
    db["presence_marks"].create({"id": int, "story_id": int, "character": str, "first": int,
                                 "last": int, "present": int}, pk="id",
                                foreign_keys=[("story_id", "stories", "id")])
    db["presence_marks"].create_index(["story_id", "id"])


@migrations()
def m014_action_lines_and_sources(db: Database) -> None:
    # where each action starts in the file its story was read from, and that file's text
    # (prose, plays, screenplays; not JSON): a writer checking a line's speaker sees the
    # original wording around it, with the tag the import read (NULL / no row: not known)
    db["actions"].add_column("line", int)
    db["story_sources"].create({"story_id": int, "text": str}, pk="story_id",
                               foreign_keys=[("story_id", "stories", "id")])


@migrations()
def m015_presence_rules(db: Database) -> None:
    # which version of the presence rules (stories/presence.RULES) a story's presence was
    # derived under: a story stored under older rules is read again under the current ones
    # when the store is opened by the app or the CLI (StoriesStore.refresh_presence), the
    # writer's corrections kept. 0: stored before this column, under some older rules
    db["stories"].add_column("presence_rules", int, not_null_default=0)
