"""Scene-scoped overrides: a pin, a card's "self" flag and a card's memory belong to the
scene that set them (and its forks), or to the story only by a writer's explicit
story-wide choice — never silently to the shared story memory."""

from __future__ import annotations

import json

from bookmarks.engine.cards import attach
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.recall import visible_bookmarks
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.scenes.panel import bookmark_timeline, edit_bookmark
from bookmarks.scenes.play import fork_at, generate_turn
from bookmarks.stories.sillytavern_card import read_card
from tests.conftest import make_llm
from tests.engine_helpers import generated_story

WHO = [{"title": "Who Ada is", "type": "concept", "subject": "Ada"}]
ADA_CARD = {"spec": "chara_card_v2", "data": {"name": "Ada", "description": "A harbour pilot "
            "from the card.", "personality": "Blunt and brave."}}


def shared(store, sid, branch_id, title="Who Ada is"):
    lineage = Lineage.of(store, branch_id)
    return next(b for b in visible_bookmarks(store, sid, "story", lineage, 10_000)
                if b.title == title)


def setup(store):
    sid = store.add_story(generated_story(300))
    fake = ScriptedFakeModel(default=ScriptedMemory(sections=WHO))
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    other = store.create_scene(sid, start_point=250, cast=["Ada", "Ben"], method="bookmarks")
    run_sync(generate_turn(store, llms, other.id, "Ada"))  # the shared "Who Ada is" exists
    trunk = store.story(sid).trunk_id
    store.commit_memory(_trunk_version(store, sid, trunk))
    return sid, llms, other, trunk


def _trunk_version(store, sid, trunk):
    from bookmarks.engine.grounding import MemoryWrites, VersionWrite
    from bookmarks.memory import ConceptContent

    bm = shared(store, sid, store.scene(store.list_scenes(sid)[0].id).branch_id)
    return MemoryWrites(versions=[VersionWrite(bm, trunk, 100, ConceptContent(
        description="Ada, as the story tells her."))])


def test_a_card_named_like_a_story_character_changes_only_its_scene(store):
    sid, llms, other, trunk = setup(store)
    scene = store.create_scene(sid, start_point=200, cast=["Ada", "Ben"], method="bookmarks")
    attach(store, scene.id, card=read_card(json.dumps(ADA_CARD).encode(), "ada.json"))
    mine = shared(store, sid, scene.branch_id)
    assert mine.pinned and mine.activation == "self"
    assert "card" in mine.content.description
    for branch in (other.branch_id, trunk):  # another scene, the prepared story memory
        theirs = shared(store, sid, branch)
        assert not theirs.pinned and theirs.activation == ""
        assert "card" not in theirs.content.description
    turn = run_sync(generate_turn(store, llms, other.id, "Ada"))
    kinds = [e["kind"] for e in store.turn_events(turn.id)]
    assert "lore" not in kinds  # the other scene's Ada does not ground on the card


def test_pinning_in_the_panel_pins_for_this_scene_and_its_forks_only(store):
    sid, llms, other, trunk = setup(store)
    scene = store.create_scene(sid, start_point=260, cast=["Ada", "Ben"], method="bookmarks")
    run_sync(generate_turn(store, llms, scene.id, "Ada"))
    bm = shared(store, sid, scene.branch_id)
    edit_bookmark(store, store.scene(scene.id), bm.id, "Ada pilots the ferry.", pinned=True)
    assert shared(store, sid, scene.branch_id).pinned
    assert bookmark_timeline(store, store.scene(scene.id), bm.id)["bookmark"]["pinned"]
    fork = fork_at(store, scene.id)
    assert shared(store, sid, fork.branch_id).pinned  # a fork inherits its scene's choices
    assert not shared(store, sid, other.branch_id).pinned
    assert not shared(store, sid, trunk).pinned
    assert not bookmark_timeline(store, store.scene(other.id), bm.id)["bookmark"]["pinned"]


def test_a_story_wide_pin_is_an_explicit_choice(store):
    sid, llms, other, trunk = setup(store)
    scene = store.create_scene(sid, start_point=260, cast=["Ada", "Ben"], method="bookmarks")
    bm = shared(store, sid, other.branch_id)
    store.set_bookmark_flags(bm.id, pinned=True, activation="")  # no branch: story-wide
    for branch in (scene.branch_id, other.branch_id, trunk):
        assert shared(store, sid, branch).pinned
    store.set_override(bm.id, scene.branch_id, pinned=False)  # one scene may still say no
    assert not shared(store, sid, scene.branch_id).pinned
    assert shared(store, sid, other.branch_id).pinned
