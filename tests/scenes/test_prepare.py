"""Prepared story memory: checkpoints every N actions, resumable, and reused by a scene
started anywhere (which then reads only the gap)."""

from __future__ import annotations

from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.scenes.play import generate_turn
from bookmarks.scenes.prepare import plan, prepare, progress
from tests.conftest import make_llm
from tests.engine_helpers import generated_story

SECTIONS = [{"title": "Ada's standing with Ben", "type": "state", "subject": "Ada"}]


def test_prepare_resumes_and_scenes_reuse_its_checkpoints(store):
    sid = store.add_story(generated_story(300))
    script = ScriptedMemory(sections=SECTIONS)
    llm = make_llm(ScriptedFakeModel(default=script), store)
    first = plan(store, sid, characters=["Ada"], every=50)
    assert first.points == [50, 100, 150, 200, 250] and first.done == 0
    assert first.calls > 0 and first.seconds > 0 and not first.measured
    stops = iter([False, False, True])
    record = run_sync(prepare(store, llm, first, should_stop=lambda: next(stops)))
    assert record["done"] == 2 and progress(store, sid)["last_point"] == 100
    again = plan(store, sid, characters=["Ada"], every=50)
    assert again.done == 2  # resumes where it stopped
    def proposals() -> int:  # asked of the model or answered from the cache
        return sum(c["purpose"] == "propose" for c in store.calls(10_000))

    before = proposals()
    record = run_sync(prepare(store, llm, again))
    assert record["done"] == 5 and proposals() == before + 3  # only the 3 steps left
    # a scene at 220 reuses the checkpoint at 200 and reads only the gap
    scene = store.create_scene(sid, start_point=220, cast=["Ada", "Ben"], method="bookmarks")
    llms = {"memory": llm, "actor": make_llm(ScriptedFakeModel(default=script), store, "actor")}
    turn = run_sync(generate_turn(store, llms, scene.id, "Ada"))
    (sync,) = [e for e in store.turn_events(turn.id) if e["kind"] == "synchronized"]
    assert (sync["p_old"], sync["actions_read"]) == (200, 20)
