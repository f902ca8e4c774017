"""Background synchronization: a prepared step leaves only the actor call for the turn;
single-flight; undo/edit while preparing never leave memory that read a removed line;
a step for another point keeps the prepared versions as checkpoints; cancelling stops."""

from __future__ import annotations

import threading

import pytest

from bookmarks.engine.lineage import Lineage
from bookmarks.engine.recall import visible_bookmarks
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.scenes.background import Prefetcher
from bookmarks.scenes.play import generate_turn, undo_last
from tests.conftest import make_llm
from tests.engine_helpers import generated_story

SECTIONS = [{"title": "Ada's standing with Ben", "type": "state", "subject": "Ada"},
            {"title": "Harbour gate", "type": "concept", "subject": "harbour gate"}]


@pytest.fixture
def setup(store):
    sid = store.add_story(generated_story(300))
    script = ScriptedMemory(sections=SECTIONS)
    fake = ScriptedFakeModel(default=script)
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(sid, start_point=250, cast=["Ada", "Ben"], method="bookmarks",
                               settings={"budget": 3})
    pre = Prefetcher(store, llms, state_block=16)
    yield store, llms, fake, script, scene, pre
    pre.close()


def _take(pre, scene_id, character):
    async def go():
        return await pre.take(scene_id, pre.step_for(scene_id, character))
    return run_sync(go())


def test_a_prepared_step_leaves_only_the_actor_call(setup):
    store, llms, fake, script, scene, pre = setup
    pre.schedule(scene.id, "Ada")
    pre.wait_idle()
    assert pre.status(scene.id)["state"] == "ready"
    before = len(fake.history)
    prepared = _take(pre, scene.id, "Ada")
    turn = run_sync(generate_turn(store, llms, scene.id, "Ada", state_block=16, prepared=prepared))
    new = fake.history[before:]
    assert [script.kind(r) for r in new] == ["act"]  # one call on the critical path
    kinds = [e["kind"] for e in store.turn_events(turn.id)]
    assert "prepared" in kinds and "grounded" in kinds and "synchronized" in kinds
    grounded = next(e for e in store.turn_events(turn.id) if e["kind"] == "grounded")
    assert grounded["text"].strip()


def test_a_turn_waits_for_the_step_being_prepared_instead_of_repeating_it(setup):
    store, llms, fake, script, scene, pre = setup
    fake.delay = 0.05
    pre.schedule(scene.id, "Ada")
    prepared = _take(pre, scene.id, "Ada")  # while it runs
    assert prepared is not None
    run_sync(generate_turn(store, llms, scene.id, "Ada", state_block=16, prepared=prepared))
    assert script.counts["propose"] == 1


def test_undo_while_preparing_saves_nothing_that_read_the_removed_line(setup):
    store, llms, fake, script, scene, pre = setup
    store.add_turn(scene.id, character="Ben", text="Ben says the gate is sealed.", source="user")
    fake.gate = threading.Event()
    pre.schedule(scene.id, "Ada")
    assert fake.entered.wait(120)  # the step is under way, reading the line
    undo_last(store, scene.id)  # removes index 251, which the step is reading
    fake.gate.set()
    pre.wait_idle()
    assert all(v["p"] < 251 for v in store.db["bookmark_versions"].rows)
    assert _take(pre, scene.id, "Ada") is None  # that step no longer exists


def test_another_step_reuses_what_was_prepared_as_a_checkpoint(setup):
    store, llms, fake, script, scene, pre = setup
    pre.schedule(scene.id, "Ada")
    pre.wait_idle()
    store.add_turn(scene.id, character="Ben", text="Ben: the tide turns.", source="user")
    assert _take(pre, scene.id, "Ada") is None  # the step moved on: a new line came first
    turn = run_sync(generate_turn(store, llms, scene.id, "Ada", state_block=16))
    syncs = [e for e in store.turn_events(turn.id) if e["kind"] == "synchronized"]
    assert syncs and all(s["p_old"] == 250 and s["actions_read"] == 1 for s in syncs)


def test_cancel_stops_the_work(setup):
    store, llms, fake, script, scene, pre = setup
    fake.gate = threading.Event()
    pre.schedule(scene.id, "Ada")
    assert fake.entered.wait(120)  # the step's first call is in flight
    calls = len(fake.history)
    pre.cancel(scene.id)
    fake.gate.set()
    pre.wait_idle()
    assert len(fake.history) == calls  # nothing more was asked after the cancel
    assert pre.status(scene.id)["state"] == "idle"
    assert not visible_bookmarks(store, scene.story_id, "story",
                                 Lineage.of(store, scene.branch_id), 300)


def test_partial_memory_answers_without_waiting_for_a_long_sync(setup):
    from bookmarks.scenes.panel import turn_activity
    from ui.panel import activity_html

    store, llms, fake, script, scene, pre = setup
    turn = run_sync(generate_turn(store, llms, scene.id, "Ada", state_block=16, max_read=50))
    kinds = [script.kind(r) for r in fake.history]
    assert "state" not in kinds and "first_state" not in kinds and "concept" not in kinds
    html = activity_html(turn_activity(store, turn.id))
    assert "partial memory: as of p 0, 250 actions behind" in html
    # with a gap under the limit, the same turn synchronizes as usual
    pre.schedule(scene.id, "Ben")
    pre.wait_idle()
    assert visible_bookmarks(store, scene.story_id, "story", Lineage.of(store, scene.branch_id), 300)
