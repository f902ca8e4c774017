"""Turns never wait blindly for background work: with partial memory on, a turn answers
with the memory that is ready instead of waiting for a long synchronization being prepared;
a failed preparation is reported once, to the turn of that step, instead of being redone
from the start; waiting is bounded."""

from __future__ import annotations

import threading

import pytest

from bookmarks.config import Settings
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.models.transport import TransientModelError
from bookmarks.scenes.background import Prefetcher, PreparationFailedError
from bookmarks.scenes.play import generate_turn
from tests.conftest import make_llm
from tests.engine_helpers import generated_story

SECTIONS = [{"title": "Ada's standing with Ben", "type": "state", "subject": "Ada"},
            {"title": "Harbour gate", "type": "concept", "subject": "harbour gate"}]
SYNC = ("first_state", "state", "concept", "behavioral", "joint")  # alone, or several blocks at once


@pytest.fixture
def held(store, tmp_path):
    """A scene at 250 whose background synchronizations (0 → 250) wait at the server
    until `release` is set; proposals and the actor answer at once."""
    sid = store.add_story(generated_story(300))
    script = ScriptedMemory(sections=SECTIONS)
    syncing, release = threading.Event(), threading.Event()

    def reply(request):
        if script.kind(request) in SYNC:
            syncing.set()
            release.wait(120)
        return script(request)

    fake = ScriptedFakeModel(default=reply)
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(sid, start_point=250, cast=["Ada", "Ben"], method="bookmarks")
    pre = Prefetcher(store, llms, state_block=16,
                     settings=lambda: Settings(data_dir=tmp_path, partial_after=50, state_block=16))
    yield store, llms, script, scene, pre, syncing, release
    release.set()
    pre.close()


def turn_in_thread(store, llms, pre, scene_id, who, max_read):
    """A Play turn as the app runs one (take the prepared step, then generate), in a
    thread; returns (thread, result dict)."""
    result: dict = {}

    async def turn():
        prepared = await pre.take(scene_id, pre.step_for(scene_id, who))
        result["prepared"] = prepared
        return await generate_turn(store, llms, scene_id, who, state_block=16,
                                   prepared=prepared, max_read=max_read)

    def run():
        try:
            result["turn"] = run_sync(turn())
        except Exception as exc:  # noqa: BLE001 - asserted by the test
            result["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def test_partial_memory_answers_while_a_long_preparation_runs(held):
    store, llms, script, scene, pre, syncing, release = held
    pre.schedule(scene.id, "Ada")
    assert syncing.wait(120)  # the background is reading 0 → 250
    thread, result = turn_in_thread(store, llms, pre, scene.id, "Ada", max_read=50)
    thread.join(60)  # a generous bound: the turn does not wait for the background
    assert not thread.is_alive() and "turn" in result, result
    assert result["prepared"] is None
    kinds = [e["kind"] for e in store.turn_events(result["turn"].id)]
    assert "sync_deferred" in kinds and "acted" in kinds
    release.set()
    assert pre.wait_idle(120)


def test_without_partial_memory_the_turn_waits_for_its_step(held):
    store, llms, script, scene, pre, syncing, release = held
    pre.schedule(scene.id, "Ada")
    assert syncing.wait(120)

    async def take():
        return await pre.take(scene.id, pre.step_for(scene.id, "Ada"), partial=0)

    got: dict = {}
    thread = threading.Thread(target=lambda: got.update(p=run_sync(take())))
    thread.start()
    release.set()
    thread.join(120)
    assert got["p"] is not None and got["p"].step[2] == "Ada"


def test_waiting_is_bounded(held):
    store, llms, script, scene, pre, syncing, release = held
    pre.schedule(scene.id, "Ada")
    assert syncing.wait(120)

    async def take():
        return await pre.take(scene.id, pre.step_for(scene.id, "Ada"), partial=0, timeout=0.2)

    assert run_sync(take()) is None  # the bound passed: the turn grounds itself
    assert all(j["cancelled"] for j in pre.running())  # and the job no longer runs for it
    pre.schedule(scene.id, "Ada")  # scheduling that step again starts a new job
    assert [j["cancelled"] for j in pre.running()].count(False) == 1
    release.set()
    assert pre.wait_idle(120) and pre.running() == []


def test_a_failed_preparation_is_reported_once_and_not_redone(store):
    sid = store.add_story(generated_story(300))
    script = ScriptedMemory(sections=SECTIONS)
    down = threading.Event()
    down.set()

    def reply(request):
        if down.is_set() and script.kind(request) == "propose":
            raise TransientModelError("The model server answered HTTP 503: overloaded")
        return script(request)

    fake = ScriptedFakeModel(default=reply)
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(sid, start_point=250, cast=["Ada", "Ben"], method="bookmarks")
    pre = Prefetcher(store, llms, state_block=16)
    try:
        pre.schedule(scene.id, "Ada")
        assert pre.wait_idle(120)
        status = pre.status(scene.id)
        assert status["state"] == "failed" and "503" in status["error"]
        asked = len(fake.history)

        async def turn():
            prepared = await pre.take(scene.id, pre.step_for(scene.id, "Ada"))
            return await generate_turn(store, llms, scene.id, "Ada", prepared=prepared)

        with pytest.raises(PreparationFailedError, match="503"):
            run_sync(turn())
        assert len(fake.history) == asked  # the same failing work was not started again
        assert pre.status(scene.id)["state"] == "idle"  # said once
        down.clear()  # the server is back: the next turn grounds itself
        assert run_sync(turn()).idx == 251
    finally:
        pre.close()
