"""The Gradio app builds and its handlers work without a browser (scripted fake model)."""

from __future__ import annotations

import gradio as gr

from bookmarks.config import load_settings
from bookmarks.models.testing import ScriptedFakeModel
from bookmarks.services import Services
from bookmarks.store import Store
from tests.conftest import make_llm
from ui.play import messages as _messages
from ui.render import esc
from ui.server import build_app


def make_services(tmp_path, fake):
    settings = load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path)})
    store = Store(settings.db_path)
    llms = {r: make_llm(fake, store, role=r) for r in ("actor", "memory", "judge")}
    return Services(settings=settings, store=store, llms=llms)


def test_app_builds_with_tabs(tmp_path):
    services = make_services(tmp_path, ScriptedFakeModel())
    services.ensure_bundled()
    demo = build_app(services)
    assert isinstance(demo, gr.Blocks)
    labels = {getattr(b, "label", None) for b in demo.blocks.values()}
    assert {"Library", "Play", "Settings"} <= labels
    # only Tab blocks may sit directly in Tabs (a stray component there breaks the tab bar)
    for block in demo.blocks.values():
        if isinstance(block, gr.Tabs):
            assert all(isinstance(child, gr.Tab) for child in block.children)


def test_story_text_is_escaped():
    line = {"index": 1, "character": "<b>X</b>", "text": "<script>alert(1)</script>",
            "source": "model", "turn_id": 1}
    (msg,) = _messages([line])
    assert "<script>" not in msg["content"] and "&lt;script&gt;" in msg["content"]
    assert esc('"&') == "&quot;&amp;"


def test_bundled_import_is_idempotent(tmp_path):
    services = make_services(tmp_path, ScriptedFakeModel())
    first = services.ensure_bundled()
    assert first and services.ensure_bundled() == []


def test_settings_saved_masked_and_applied(tmp_path):
    from bookmarks import model_settings

    services = make_services(tmp_path, ScriptedFakeModel())
    model_settings.save(services, {"actor": {"base_url": "http://127.0.0.1:9/v1",
                                             "api_key": "sk-secret-123456", "model": "m1",
                                             "temperature": 0.5}})
    shown = model_settings.current(services)["actor"]
    assert shown["api_key_masked"] == "sk-…56" and "secret" not in str(shown)
    assert services.llms["actor"].model.base_url == "http://127.0.0.1:9/v1"
    assert services.llms["memory"].config.embedded
    # an empty key keeps the stored one; "-" clears it
    model_settings.save(services, {"actor": {"base_url": "http://127.0.0.1:9/v1", "api_key": "",
                                             "model": "m2", "temperature": 0.5}})
    assert services.settings.role("actor").api_key == "sk-secret-123456"
    model_settings.save(services, {"actor": {"base_url": "", "api_key": "-", "model": "",
                                             "temperature": 0.8}})
    assert services.settings.role("actor").embedded
    # and they survive a restart
    reopened = Services.open(load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path)}),
                             llms=services.llms)
    assert reopened.settings.role("actor").temperature == 0.8


def test_pickers_start_empty(tmp_path):
    """Gradio 6 preselects a dropdown's first choice unless told otherwise; then choosing
    that story fires no change event and the cast never fills in."""
    services = make_services(tmp_path, ScriptedFakeModel())
    services.ensure_bundled()
    demo = build_app(services)
    pickers = {b.elem_id: b for b in demo.blocks.values() if isinstance(b, gr.Dropdown)}
    for elem_id in ("play-story", "play-scenes", "library-story"):
        assert pickers[elem_id].value is None, elem_id


def test_lore_keys_match_as_world_info_does():
    """Case-insensitive, whole words, several words in a row, singular and plural alike."""
    from bookmarks.engine.cards import matched_keys

    line = "Beware the Shadowfang beasts on the moors, Tomas's lenses!"
    assert matched_keys(["shadowfang", "beasts", "Shadowfang Beast", "beast"], line) == \
        ["shadowfang", "beasts", "Shadowfang Beast", "beast"]
    assert matched_keys(["moor", "lens", "tomas"], line) == ["moor", "lens", "tomas"]
    assert matched_keys(["fang", "beasts moors", "is", "the moon"], line) == []
    assert matched_keys(["wolf", "story", "knife"], "wolves, stories and knives") == \
        ["wolf", "story", "knife"]


def _card_scene(tmp_path, entries: list[dict]):
    import json

    from bookmarks.models.testing import ScriptedMemory
    from bookmarks.scenes.new_scene import EMPTY_STAGE, start_scene
    from bookmarks.stories.sillytavern_card import read_card

    card = read_card(json.dumps({"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "Marisol Quill", "description": "A cartographer who maps tides by ear.",
        "first_mes": "Seven waves, {{user}}.", "mes_example": "",
        "character_book": {"entries": entries}}}).encode(), "marisol.json")
    services = make_services(tmp_path, ScriptedFakeModel(default=ScriptedMemory(sections=[])))
    scene = start_scene(services.store, story_id=None, point=None, cast=[], card=card,
                        method="bookmarks", settings={"budget": 3})
    assert services.store.story(scene.story_id).title == EMPTY_STAGE
    return services, scene


def test_a_card_alone_starts_a_scene_on_an_empty_stage(tmp_path):
    from bookmarks.models.llm import run_sync
    from bookmarks.scenes.new_scene import YOU
    from bookmarks.scenes.play import generate_turn

    services, scene = _card_scene(tmp_path, [])
    store = services.store
    assert scene.cast == ["Marisol Quill", YOU] and scene.start_point == 0
    assert [t.text for t in store.turns(scene.id)] == ["Seven waves, User."]
    store.add_turn(scene.id, character=YOU, text="Which tide tonight?", source="user")
    turn = run_sync(generate_turn(store, services.llms, scene.id, "Marisol Quill"))
    grounded = next(e for e in store.turn_events(turn.id) if e["kind"] == "grounded")
    assert "maps tides by ear" in grounded["text"]
    # a second card scene plays on the same empty stage
    _, again = _card_scene(tmp_path, [])
    assert again.story_id == scene.story_id


def test_the_panel_says_which_lore_grounded_and_why_not(tmp_path):
    """Mentioned (plural for a singular key) → grounded; not mentioned → said, with its
    keys; mentioned but past the grounding's token budget → dropped for the budget."""
    from bookmarks.models.llm import run_sync
    from bookmarks.scenes import panel
    from bookmarks.scenes.new_scene import YOU
    from bookmarks.scenes.play import generate_turn
    from ui.panel import activity_html

    long = "The beasts hunt in packs along the tideline. " * 70  # ≈3,100 characters
    services, scene = _card_scene(tmp_path, [
        {"keys": ["Shadowfang Beast"], "content": "Shadowfang beasts fear brass whistles.",
         "comment": "Shadowfang", "enabled": True, "insertion_order": 30},
        {"keys": ["moor"], "content": "The moor floods at spring tide.", "comment": "The moor",
         "enabled": True, "insertion_order": 20},
        {"keys": ["tideline"], "content": long, "comment": "Packs", "enabled": True},
        {"keys": ["gate"], "content": long, "comment": "The gate", "enabled": True},
        {"keys": ["pack"], "content": long, "comment": "Hunting", "enabled": True}])
    store = services.store
    store.add_turn(scene.id, character=YOU, text="Shadowfang beasts at the gate, by the "
                   "tideline, in packs!", source="user")
    turn = run_sync(generate_turn(store, services.llms, scene.id, "Marisol Quill"))
    act = panel.turn_activity(store, turn.id)
    lore = {e["title"]: e for e in act["lore"]}
    assert lore["Shadowfang"]["status"] == "grounded"
    assert "Shadowfang Beast" in lore["Shadowfang"]["why"]
    assert lore["The moor"]["status"] == "unused" and "keys: moor" in lore["The moor"]["why"]
    assert lore["Who Marisol Quill is"]["status"] == "grounded"
    dropped = [e for e in act["lore"] if e["status"] == "dropped"]
    assert dropped and all("token budget" in e["why"] for e in dropped)
    assert any("cut short" in e["why"] for e in act["lore"] if e["status"] == "grounded")
    html = activity_html(act, "2 · Marisol Quill")
    assert "Card and lore memory" in html and "no key mentioned" in html
    # the greeting turn: no actor was asked, and the panel says so (not "tries: None")
    greeting = store.turns(scene.id)[0]
    assert "actor tries: None" not in activity_html(panel.turn_activity(store, greeting.id))


def test_a_streaming_try_that_is_someone_elses_line_is_not_shown():
    from ui.play_scene import draft

    assert draft("I will see to it.", "Jack Worthing") == "I will see to it."
    assert draft("Jack Worthing: I will.", "Jack Worthing") == "I will."
    assert draft("**Jack:** I will.", "Jack Worthing") == "I will."
    assert draft("Cecily Cardew: Oh, Jack!", "Jack Worthing") is None
    assert draft("Charlie: Auld laelle", "Jack Worthing") is None
    assert draft("1. Jack's next line: no", "Jack Worthing") is None


def test_a_fountain_export_names_the_story_once(tmp_path):
    from bookmarks.scenes.scene_export import export_scene
    from bookmarks.stories.importers import load_story
    from tests.conftest import STORIES

    services = make_services(tmp_path, ScriptedFakeModel())
    store = services.store
    sid = store.add_story(load_story(STORIES / "the_long_winter_at_harrowgate.txt"))
    scene = store.create_scene(sid, start_point=469, cast=["Maren Voss", "Silas Grint"])
    store.add_turn(scene.id, character="Maren Voss", text="Forty crowns.", source="user")
    text = export_scene(store, scene.id, "fountain")
    assert text.startswith("Title: The Long Winter at Harrowgate — from action 469\n")
    assert text.count("Long Winter") == 1, text
    assert "\n.Act II, Scene 4: The Midwinter Feast\n" in text


def test_the_storyline_views_narration_holding_a_quote_and_one_characters_lines():
    from bookmarks.stories.story import Action
    from ui.library import EVERY, QUOTED, storyline_view

    lines = [Action(index=1, character="narration", text="It's Maren's toll house."),
             Action(index=2, character="narration", text="\u201cCome in,\u201d she said."),
             Action(index=3, character="narration", text="'Sit,' he said, single-quoted."),
             Action(index=4, character="Maren", text="\u201cNot a word.\u201d"),
             Action(index=5, character="narration", text='"Plain quotes," someone said.')]
    assert [a.index for a in storyline_view(lines, QUOTED)] == [2, 3, 5]  # no apostrophe
    assert [a.index for a in storyline_view(lines, "Maren")] == [4]
    assert storyline_view(lines, EVERY) == lines


def test_the_storyline_view_of_lines_to_check():
    from bookmarks.stories.story import Action
    from ui.library import CHECK, check_view, storyline_view

    lines = [Action(index=1, character="Maren", text="Come in.", check=None),
             Action(index=2, character="Tobias", text="Not yet.", check="turn-taking"),
             Action(index=3, character="narration", text="She waited.")]
    assert [a.index for a in storyline_view(lines, CHECK)] == [2]
    lines.append(Action(index=4, character="Maren", text="Yes.", check="a pronoun tag"))
    assert [a.index for a in storyline_view(lines, CHECK)] == [2, 4]
    assert [a.index for a in storyline_view(lines, check_view("a pronoun tag"))] == [4]
    assert [a.index for a in storyline_view(lines, check_view("turn-taking"))] == [2]
    assert storyline_view(lines, check_view("the context")) == []
