"""Every change that alters what memory may have read goes through the branch epoch:
presence corrections, merges, bookmark edits and pins, card attach, story deletion. A
prepared step is dropped, a preparation in flight is cancelled and can save nothing, and
the next prompt carries nothing the change removed."""

from __future__ import annotations

import json
import threading

import pytest

from bookmarks.engine.cards import attach
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.recall import visible_bookmarks
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.scenes.background import Prefetcher
from bookmarks.scenes.panel import edit_bookmark
from bookmarks.scenes.play import generate_turn
from bookmarks.stories.sillytavern_card import read_card
from tests.conftest import make_llm
from tests.engine_helpers import generated_story

SECTIONS = [{"title": "Ada's standing with Ben", "type": "state", "subject": "Ada"},
            {"title": "Harbour gate", "type": "concept", "subject": "harbour gate"}]


def make(store, *, knowledge="omniscient"):
    sid = store.add_story(generated_story(300))
    script = ScriptedMemory(sections=SECTIONS)
    fake = ScriptedFakeModel(default=script)
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    scene = store.create_scene(sid, start_point=250, cast=["Ada", "Ben"], method="bookmarks",
                               settings={"budget": 3, "knowledge": knowledge})
    return sid, fake, script, llms, scene


@pytest.fixture
def pre(store):
    made = []

    def build(llms):
        made.append(Prefetcher(store, llms, state_block=16))
        return made[-1]

    yield build
    for p in made:
        p.close()


def take(pre, scene_id, who):
    async def go():
        return await pre.take(scene_id, pre.step_for(scene_id, who))
    return run_sync(go())


def in_flight(fake, pre, scene_id, who):
    """Schedule `who`'s step and hold it at the model server."""
    fake.gate = threading.Event()
    pre.schedule(scene_id, who)
    assert fake.entered.wait(120)


def finish(fake, pre):
    fake.gate.set()
    assert pre.wait_idle(120)
    fake.gate = None


def test_a_presence_correction_drops_the_prepared_step(store, pre):
    sid, fake, script, llms, scene = make(store, knowledge="witnessed")
    p = pre(llms)
    p.schedule(scene.id, "Ada")
    assert p.wait_idle(120) and p.status(scene.id)["state"] == "ready"
    store.mark_presence(sid, "Ada", 241, 250, present=False)
    assert p.status(scene.id)["state"] == "idle"
    assert take(p, scene.id, "Ada") is None
    fake.history.clear()
    run_sync(generate_turn(store, llms, scene.id, "Ada", state_block=16))
    act = [r for r in fake.history if script.kind(r) == "act"][-1]
    prompt = "\n".join(m["content"] for m in act.messages)
    assert not any(f"Line {i} " in prompt or f"Line {i}:" in prompt for i in range(241, 251))


def test_a_presence_correction_cancels_a_preparation_in_flight(store, pre):
    sid, fake, script, llms, scene = make(store, knowledge="witnessed")
    p = pre(llms)
    in_flight(fake, p, scene.id, "Ada")
    store.mark_presence(sid, "Ada", 241, 250, present=False)
    assert all(j["cancelled"] for j in p.running())
    finish(fake, p)
    assert store.db["bookmark_versions"].count == 0  # nothing read under the old presence


def storyline_correction(store, pre, correct, first: int) -> None:
    """A correction of the storyline (`correct(story_id)`) made while one scene's step is
    prepared and another's is in flight: memory from action `first` on is dropped, the
    epoch moves, the prepared step is dropped and the job in flight saves nothing."""
    sid, fake, script, llms, scene = make(store)
    other = store.create_scene(sid, start_point=200, cast=["Ada", "Ben"], method="bookmarks")
    p = pre(llms)
    p.schedule(other.id, "Ben")
    assert p.wait_idle(120) and p.status(other.id)["state"] == "ready"
    versions = store.db["bookmark_versions"].count
    assert versions and any(v["p"] >= first for v in store.db["bookmark_versions"].rows)
    in_flight(fake, p, scene.id, "Ada")
    epoch = store.branch_epoch(scene.branch_id)
    correct(sid)
    assert store.branch_epoch(scene.branch_id) != epoch
    after = store.db["bookmark_versions"].count
    assert after < versions and all(v["p"] < first for v in store.db["bookmark_versions"].rows)
    assert p.status(other.id)["state"] == "idle" and take(p, other.id, "Ben") is None
    finish(fake, p)
    assert store.db["bookmark_versions"].count == after  # the job in flight saved nothing


def test_a_merge_drops_prepared_steps_and_cancels_jobs(store, pre):
    # Cora's lines now read "Ben: …"; Cora first acts at 37
    storyline_correction(store, pre, lambda sid: store.merge_characters(sid, "Ben", "Cora"), 37)


def test_a_corrected_line_drops_memory_that_read_it_and_cancels_jobs(store, pre):
    # the writer gives action 50 to Ben
    storyline_correction(store, pre, lambda sid: store.correct_line(sid, 50, "Ben"), 50)


def test_a_preparation_never_overtakes_a_writers_edit(store, pre):
    sid, fake, script, llms, scene = make(store)
    run_sync(generate_turn(store, llms, scene.id, "Ada", state_block=16))
    lineage = Lineage.of(store, scene.branch_id)
    gate = next(b for b in visible_bookmarks(store, sid, "story", lineage, 300)
                if b.title == "Harbour gate")
    p = pre(llms)
    in_flight(fake, p, scene.id, "Ben")
    edit_bookmark(store, store.scene(scene.id), gate.id, "The gate is iron and rusted shut.",
                  pinned=False)
    finish(fake, p)
    now = next(b for b in visible_bookmarks(store, sid, "story", Lineage.of(store, scene.branch_id),
                                            300) if b.id == gate.id)
    assert now.content.description == "The gate is iron and rusted shut."
    assert p.status(scene.id)["state"] == "idle"


def test_a_pin_drops_the_prepared_step(store, pre):
    sid, fake, script, llms, scene = make(store)
    run_sync(generate_turn(store, llms, scene.id, "Ada", state_block=16))
    bid = store.db["bookmarks"].rows_where("title = ?", ["Harbour gate"]).__next__()["id"]
    p = pre(llms)
    p.schedule(scene.id, "Ben")
    assert p.wait_idle(120) and p.status(scene.id)["state"] == "ready"
    store.set_override(bid, scene.branch_id, pinned=True)
    assert take(p, scene.id, "Ben") is None and p.status(scene.id)["state"] == "idle"


def test_attaching_a_card_cancels_the_preparation(store, pre):
    sid, fake, script, llms, scene = make(store)
    p = pre(llms)
    in_flight(fake, p, scene.id, "Ada")
    card = read_card(json.dumps({"spec": "chara_card_v2", "data": {
        "name": "Ada", "description": "A harbour pilot.", "personality": "Blunt."}}).encode(),
        "ada.json")
    attach(store, scene.id, card=card)
    finish(fake, p)
    rows = store.db.execute("SELECT p FROM bookmark_versions").fetchall()
    assert rows == [(250,)]  # the card's own memory; nothing the preparation read before it


def test_deleting_the_story_cancels_its_background_jobs(store, pre):
    sid, fake, script, llms, scene = make(store)
    p = pre(llms)
    in_flight(fake, p, scene.id, "Ada")
    store.delete_story(sid)
    assert all(j["cancelled"] for j in p.running())  # (a cancelled task may end at once)
    finish(fake, p)
    assert p.running() == [] and p.untracked() == 0
    assert store.db["bookmarks"].count == 0 and p.status(scene.id)["state"] == "idle"


def test_epoch_covers_the_whole_lineage(store):
    sid = store.add_story(generated_story(60))
    scene = store.create_scene(sid, start_point=50, cast=["Ada", "Ben"])
    store.add_turn(scene.id, character="Ada", text="One.", source="user")
    fork = store.fork_scene(scene.id, 51)
    before = store.branch_epoch(fork.branch_id)
    store.mark_presence(sid, "Ben", 1, 10, present=False)  # the trunk changed
    assert store.branch_epoch(fork.branch_id) > before
    seen: list[dict] = []
    store.subscribe(seen.append)
    turn = store.add_turn(scene.id, character="Ben", text="Two.", source="user")
    store.delete_turn(turn.id)
    assert seen and seen[-1]["branches"] == [scene.branch_id]


def test_prepare_grounds_a_checkpoint_again_when_presence_changes_under_it(store):
    from bookmarks.scenes.prepare import plan, prepare

    sid = store.add_story(generated_story(120))
    script = ScriptedMemory(sections=SECTIONS)
    corrected: list[bool] = []

    def reply(request):
        if script.kind(request) == "propose" and not corrected:
            corrected.append(True)  # a writer corrects presence while the step runs
            store.mark_presence(sid, "Ben", 1, 20, present=False)
        return script(request)

    fake = ScriptedFakeModel(default=reply)
    fake.sync_mode = "separate"  # checkpoint by checkpoint (read-once checks epochs its own way)
    llm = make_llm(fake)  # no reply cache: every call is seen
    record = run_sync(prepare(store, llm, plan(store, sid, characters=["Ada"], every=50)))
    assert record["done"] == 2 and corrected
    assert script.counts["propose"] == 3  # the first checkpoint was grounded twice


def test_detaching_a_card_takes_its_memory_out_and_cancels_the_preparation(store, pre):
    from bookmarks.engine.cards import detach

    sid, fake, script, llms, scene = make(store)
    card = read_card(json.dumps({"spec": "chara_card_v2", "data": {
        "name": "Ada", "description": "A harbour pilot.", "personality": "Blunt.",
        "character_book": {"entries": [{"keys": ["gate"], "content": "The gate sings.",
                                        "enabled": True}]}}}).encode(), "ada.json")
    attach(store, scene.id, card=card, lore=card.lorebook)
    p = pre(llms)
    p.schedule(scene.id, "Ben")
    assert p.wait_idle(120) and p.status(scene.id)["state"] == "ready"
    assert detach(store, scene.id, card="Ada") == 1
    assert p.status(scene.id)["state"] == "idle"  # the prepared step read the card
    lineage = Lineage.of(store, scene.branch_id)
    titles = {b.title for b in visible_bookmarks(store, sid, "story", lineage, 300)}
    assert "Who Ada is" not in titles and "The gate sings." not in titles
    assert any(b.activation == "keys" for b in visible_bookmarks(store, sid, "story", lineage, 300))
    assert detach(store, scene.id, lore=True) == 1
    assert not any(b.activation for b in visible_bookmarks(store, sid, "story", lineage, 300))
