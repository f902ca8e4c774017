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
