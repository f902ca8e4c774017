"""SillyTavern cards and lorebooks as scene memory; a scene's memory out as World Info."""

from __future__ import annotations

import json

from bookmarks.engine.cards import attach, world_info_for
from bookmarks.models.llm import run_sync
from bookmarks.models.testing import ScriptedFakeModel, ScriptedMemory
from bookmarks.scenes.play import generate_turn
from bookmarks.stories.sillytavern_card import read_card
from bookmarks.stories.sillytavern_lorebook import read_world_info
from tests.conftest import make_llm
from tests.engine_helpers import generated_story

CARD = {
    "spec": "chara_card_v2", "spec_version": "2.0",
    "data": {
        "name": "Marisol Quill", "description": "A cartographer who maps tides by ear.",
        "personality": "Patient, dry, counts waves aloud.",
        "scenario": "{{char}} has come to the harbour to chart the gate's tides.",
        "first_mes": "Seven waves, {{user}}. Then the gate sings.",
        "mes_example": "<START>\n{{user}}: What are you doing?\n{{char}}: Counting. Hush.",
        "character_book": {"entries": [
            {"keys": ["gate"], "content": "The harbour gate has a brass whistle in its hinge.",
             "comment": "The singing gate", "enabled": True, "insertion_order": 10},
            {"keys": ["lighthouse"], "content": "The lighthouse has been dark for a year.",
             "enabled": True, "insertion_order": 20}]},
    },
}


def test_a_card_grounds_its_character_and_lore_grounds_when_mentioned(store):
    sid = store.add_story(generated_story(200))
    card = read_card(json.dumps(CARD).encode(), "marisol.json")
    scene = store.create_scene(sid, start_point=150, cast=["Ada", card.name], method="bookmarks")
    assert attach(store, scene.id, card=card, lore=card.lorebook) == 5
    script = ScriptedMemory(sections=[])  # no proposals: only the card's memory can ground
    fake = ScriptedFakeModel(default=script)
    llms = {"memory": make_llm(fake, store), "actor": make_llm(fake, store, role="actor")}
    turn = run_sync(generate_turn(store, llms, scene.id, card.name))
    grounded = next(e for e in store.turn_events(turn.id) if e["kind"] == "grounded")
    text = grounded["text"]
    assert "maps tides by ear" in text and "Counting. Hush." in text and "chart the gate" in text
    # "gate" is mentioned in the scene window (the generated story's lines 150, 140 …)
    assert "brass whistle" in text and "dark for a year" not in text
    # Ada does not get Marisol's own memory, only what her scene mentions
    turn = run_sync(generate_turn(store, llms, scene.id, "Ada"))
    text = next(e for e in store.turn_events(turn.id) if e["kind"] == "grounded")["text"]
    assert "maps tides by ear" not in text
    # other scenes and the shared memory are untouched
    other = store.create_scene(sid, start_point=150, cast=["Ada", "Ben"], method="bookmarks")
    turn = run_sync(generate_turn(store, llms, other.id, "Ada"))
    text = next(e for e in store.turn_events(turn.id) if e["kind"] == "grounded")["text"]
    assert "brass whistle" not in text


def test_world_info_out_and_back_in(store):
    sid = store.add_story(generated_story(200))
    card = read_card(json.dumps(CARD).encode(), "marisol.json")
    scene = store.create_scene(sid, start_point=150, cast=["Ada", card.name], method="bookmarks")
    attach(store, scene.id, card=card, lore=card.lorebook)
    out = world_info_for(store, sid, scene_id=scene.id)
    entries = read_world_info(out.encode(), "exported.json")
    by_title = {e.title: e for e in entries}
    assert any("brass whistle" in e.content for e in entries)
    assert any(e.keys[0] == "Marisol Quill" and "cartographer" in e.content for e in entries)
    assert "The singing gate" in " ".join(by_title)


def test_a_scene_goes_out_as_markdown_fountain_and_jsonl(store):
    from bookmarks.scenes.scene_export import export_scene
    from bookmarks.stories.importers import parse_story

    sid = store.add_story(generated_story(200))
    scene = store.create_scene(sid, start_point=150, cast=["Ada", "Ben"], setting="A wet quay.")
    store.add_turn(scene.id, character="Ada", text="The gate sings at seven waves.", source="user")
    store.add_turn(scene.id, character="narration", text="The tide turns.", source="user")
    store.add_turn(scene.id, character="Ben", text="Then we wait for eight.", source="user")
    md = export_scene(store, scene.id, "markdown")
    assert "**Ada:** The gate sings at seven waves." in md and "*A wet quay.*" in md
    assert "Line 150" not in md  # the story before the scene is not part of it
    rows = [json.loads(x) for x in export_scene(store, scene.id, "jsonl").splitlines()]
    assert [r["character"] for r in rows] == ["Ada", "narration", "Ben"]
    back = parse_story(export_scene(store, scene.id, "fountain").encode(), "scene.fountain")
    spoken = [(a.character, a.text) for a in back.actions if a.character != "narration"]
    assert spoken == [("Ada", "The gate sings at seven waves."), ("Ben", "Then we wait for eight.")]
