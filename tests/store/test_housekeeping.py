"""Housekeeping: deleting a story takes its evaluation and arena runs with it (or refuses,
saying why, when asked to keep them) — never a foreign-key error; `compare` refuses runs
of different stories or protocols."""

from __future__ import annotations

import pytest

from bookmarks.errors import BookmarksError
from bookmarks.evaluation.evaluate import run_nap
from bookmarks.evaluation.report import compare
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from tests.conftest import make_llm
from tests.engine_helpers import generated_story


def llms_for(store):
    fake = ScriptedFakeModel(default=ScriptedMemory())
    return {r: make_llm(fake, store, role=r) for r in ("actor", "memory", "judge")}


def nap(store, sid, **kw):
    return run_sync(run_nap(store, llms_for(store), sid, characters=["Ada"], **kw))


def with_arena(store, sid):
    scene_a = store.create_scene(sid, start_point=40, cast=["Ada", "Ben"], method="bookmarks")
    scene_b = store.create_scene(sid, start_point=40, cast=["Ada", "Ben"], method="eta3")
    start = store.add_arena_start(sid, 40, ["Ada", "Ben"], "", "Ada", "Hello.")
    item = store.add_arena_item(start, "bookmarks", "eta3", scene_a.id, scene_b.id, 2)
    store.arena_view(item, "ann", "bookmarks", "eta3")
    store.add_judgment({"item_id": item, "annotator": "ann", "left_method": "bookmarks",
                        "right_method": "eta3", "vote": "left", "source": "human"})
    return item


def test_deleting_a_story_removes_its_runs(store):
    sid = store.add_story(generated_story(60))
    keep = store.add_story(generated_story(60))
    run = nap(store, sid, points=2)
    other = nap(store, keep, points=2)
    with_arena(store, sid)
    assert store.story_runs(sid) == {"runs": 1, "arena_items": 1}
    assert store.delete_story(sid) == {"runs": 1, "arena_items": 1}
    with pytest.raises(BookmarksError):
        store.run(run["id"])
    assert store.run(other["id"])["story_id"] == keep and store.records(other["id"])
    for table in ("arena_starts", "arena_items", "arena_views", "judgments", "eval_records"):
        rows = list(store.db[table].rows)
        assert table == "eval_records" and rows or not rows, table
    assert store.integrity_ok()
    assert not store.db.execute("PRAGMA foreign_key_check").fetchall()


def test_keeping_the_runs_refuses_clearly(store):
    sid = store.add_story(generated_story(60))
    nap(store, sid, points=2)
    with pytest.raises(BookmarksError, match="1 evaluation run.*cannot outlive their story"):
        store.delete_story(sid, keep_runs=True)
    assert store.story(sid)  # nothing was deleted
    bare = store.add_story(generated_story(30))
    store.delete_story(bare, keep_runs=True)  # a story without runs goes


def test_compare_refuses_different_stories_and_protocols(store):
    a, b = store.add_story(generated_story(80)), store.add_story(generated_story(80))
    on_a = nap(store, a, span=(20, 40))
    on_b = nap(store, b, span=(20, 40))
    with pytest.raises(BookmarksError, match="same story"):
        compare(store, on_a["id"], on_b["id"])
    single = nap(store, a, span=(20, 40), judge_mode="single")
    with pytest.raises(BookmarksError, match="judge mode"):
        compare(store, on_a["id"], single["id"])
    sample = nap(store, a, points=4)
    with pytest.raises(BookmarksError, match="protocol"):
        compare(store, on_a["id"], sample["id"])
    again = nap(store, a, span=(20, 40))
    assert compare(store, on_a["id"], again["id"])["items"] > 0
