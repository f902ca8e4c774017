"""A story stored under older presence rules is read again under the current ones when the
app or the CLI opens the store: the writer's corrections stay on top, and only the
witnessed memory that read an action whose presence changed is dropped. Before, a novel
imported before the prose rules kept its near-omniscient presence for good."""

from __future__ import annotations

import logging

from bookmarks.config import load_settings
from bookmarks.models.testing import ScriptedFakeModel
from bookmarks.services import Services
from bookmarks.store import Store
from bookmarks.stories.presence import RULES
from tests.conftest import make_llm
from tests.engine.test_witnessed import play_story

EVERYONE = {"Ada Penrose": [(1, 16)], "Ben Carne": [(1, 16)], "Cid Hale": [(1, 16)]}


def as_stored_long_ago(store: Store, sid: int) -> None:
    """The story as an older version left it: everyone present throughout, no rules noted."""
    store._write_presence(sid, EVERYONE)
    store.db.execute("UPDATE stories SET presence_rules = 0 WHERE id = ?", [sid])


def memory(store: Store, sid: int, name: str, *points: int) -> int:
    """A witnessed bookmark of `name` with a version synchronized up to each point."""
    trunk = store.story(sid).trunk_id
    bid = store.db["bookmarks"].insert(
        {"story_id": sid, "subject": name, "type": "concept", "title": "The key",
         "pinned": 0, "created_at": "", "space": f"play@{name}"}).last_pk
    for p in points:
        store.db["bookmark_versions"].insert({"bookmark_id": bid, "branch_id": trunk, "p": p,
                                              "content": f"seen to {p}", "created_at": ""})
    return bid


def kept(store: Store, bid: int) -> list[int]:
    return sorted(r["p"] for r in store.db["bookmark_versions"].rows_where("bookmark_id = ?", [bid]))


def test_a_new_story_is_stored_under_the_current_rules(store):
    sid = store.add_story(play_story())
    assert store.story(sid).presence_rules == RULES
    assert store.refresh_presence() == {}


def test_old_presence_is_read_again_and_only_memory_that_read_a_change_goes(store):
    sid = store.add_story(play_story())
    derived = store.presence(sid)
    assert derived["Ada Penrose"] == [(1, 9)]
    as_stored_long_ago(store, sid)
    ada = memory(store, sid, "Ada Penrose", 3, 9, 12)
    cid = memory(store, sid, "Cid Hale", 12)
    epoch = store.branch_epoch(store.story(sid).trunk_id)
    seen: list[dict] = []
    store.subscribe(seen.append)

    changed = store.refresh_presence()

    assert set(changed) == {sid} and set(changed[sid]) == set(EVERYONE)
    assert store.presence(sid) == derived
    assert store.story(sid).presence_rules == RULES
    assert kept(store, ada) == [3, 9]  # Ada saw 1–9 either way; not 10 on
    assert kept(store, cid) == []  # Cid was not there at the start after all
    assert store.branch_epoch(store.story(sid).trunk_id) > epoch and seen  # prepared work drops
    assert store.refresh_presence() == {}  # once


def test_the_writers_corrections_stay_on_top(store):
    sid = store.add_story(play_story())
    store.mark_presence(sid, "Cid Hale", 1, 2, True)  # a hidden listener, say
    store.mark_presence(sid, "Ada Penrose", 14, 15, True)
    corrected = store.presence(sid)
    as_stored_long_ago(store, sid)
    store.refresh_presence()
    assert store.presence(sid) == corrected


def test_a_story_whose_presence_the_rules_keep_is_left_alone(store):
    sid = store.add_story(play_story())
    ada = memory(store, sid, "Ada Penrose", 3, 12)
    store.db.execute("UPDATE stories SET presence_rules = 0 WHERE id = ?", [sid])
    epoch = store.branch_epoch(store.story(sid).trunk_id)
    assert store.refresh_presence() == {sid: []}
    assert kept(store, ada) == [3, 12]
    assert store.branch_epoch(store.story(sid).trunk_id) == epoch
    assert store.story(sid).presence_rules == RULES


def test_opening_the_app_reads_old_stories_again(tmp_path, caplog):
    settings = load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path)})
    llm = make_llm(ScriptedFakeModel())
    llms = {"actor": llm, "memory": llm, "judge": llm}
    first = Services.open(settings, llms=llms)
    sid = first.store.add_story(play_story())
    as_stored_long_ago(first.store, sid)
    first.store.close()
    with caplog.at_level(logging.INFO, logger="bookmarks.services"):
        again = Services.open(settings, llms=llms)
    assert again.store.presence(sid)["Ada Penrose"] == [(1, 9)]
    assert f"story {sid} (3 characters changed)" in caplog.text
    again.store.close()
