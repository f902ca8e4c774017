"""A writer's presence corrections are kept: a later line correction or merge derives
presence anew from the storyline, and the corrections are applied on top again, in the
order made — also those a re-imported JSONL carries. Before, the first correction of a
line silently dropped every presence correction of the story."""

from __future__ import annotations

import pytest

from bookmarks.stories.importers import load_story
from tests.conftest import STORIES
from tests.stories.test_story_roundtrip import round_trip, snapshot

FERRY = STORIES / "the_night_ferry.txt"


def runs(store, sid: int, name: str) -> list[tuple[int, int]]:
    return store.presence(sid).get(name, [])


def cells(store, sid: int, name: str) -> set[int]:
    return {i for a, b in runs(store, sid, name) for i in range(a, b + 1)}


@pytest.fixture
def ferry(store):
    sid = store.add_story(load_story(FERRY))
    names = [c.name for c in store.characters(sid)]
    return sid, names


def a_line(store, sid: int, after: int):
    return next(a for a in store.actions(sid) if a.character != "narration" and a.index > after)


def test_a_line_correction_keeps_the_presence_corrections(store, ferry):
    sid, names = ferry
    first, second = names[0], names[1]
    assert 1 in cells(store, sid, first)
    store.mark_presence(sid, first, 1, 3, False)
    store.mark_presence(sid, second, 20, 30, True)
    store.mark_presence(sid, second, 25, 25, False)  # a later mark wins where they overlap
    marked = {n: cells(store, sid, n) for n in (first, second)}
    line = a_line(store, sid, 50)
    store.correct_line(sid, line.index, line.character, line.text + " Indeed.")
    assert {n: cells(store, sid, n) for n in (first, second)} == marked
    assert not {1, 2, 3} & cells(store, sid, first)
    assert set(range(20, 31)) - {25} <= cells(store, sid, second) and 25 not in cells(store, sid, second)


def test_a_merge_keeps_the_corrections_of_both(store, ferry):
    sid, names = ferry
    keep, merge = names[0], names[-1]
    store.mark_presence(sid, merge, 5, 9, True)
    store.mark_presence(sid, keep, 100, 102, False)
    store.merge_characters(sid, keep, merge)
    got = cells(store, sid, keep)
    assert set(range(5, 10)) <= got and not {100, 101, 102} & got
    assert store.presence_marks(sid)[0][0] == keep  # the merged one's marks are keep's now


def test_a_reimported_jsonl_keeps_its_corrections_through_a_line_correction(store, ferry, tmp_path):
    sid, names = ferry
    store.mark_presence(sid, names[0], 1, 3, False)
    store.mark_presence(sid, names[1], 20, 30, True)
    again = round_trip(store, sid, "jsonl", tmp_path / "out")
    assert snapshot(store, again)["presence"] == snapshot(store, sid)["presence"]
    assert store.presence_marks(again)  # the JSONL's differences from the storyline
    line = a_line(store, again, 50)
    store.correct_line(again, line.index, line.character, line.text + " Indeed.")
    assert not {1, 2, 3} & cells(store, again, names[0])
    assert set(range(20, 31)) <= cells(store, again, names[1])


def test_an_import_without_presence_has_no_marks_and_deleting_the_story_drops_them(store, ferry):
    sid, names = ferry
    assert store.presence_marks(sid) == []
    store.mark_presence(sid, names[0], 1, 3, False)
    assert store.presence_marks(sid) == [(names[0], 1, 3, False)]
    store.delete_story(sid)
    assert store.db.execute("SELECT COUNT(*) FROM presence_marks").fetchone()[0] == 0
