"""The writer's page (issue 23), in real Chromium on a scripted model server: nothing
changes behind the writer's back, errors leave the form intact, and what the page shows
is true. Every wait is on a condition, with generous bounds (never a fixed sleep)."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time

import pytest

from bookmarks.models.testing import ScriptedMemory
from bookmarks.store import Store
from tests.fake_server import scripted_server
from tests.tools import fill_number, open_tab, pick, pick_story
from tests.ui.test_browser import App, Held, browser, shot  # noqa: F401 - the browser fixture

pytestmark = pytest.mark.browser
QUIET = {"BOOKMARKS_BACKGROUND_SYNC": "0"}


def app_log(app: App) -> str:
    return "\n".join(p.read_text(errors="replace") for p in app.data_dir.glob("app-*.log"))


def error_badges(page) -> int:
    """Gradio's per-output error markers (what `gr.Error` puts on every output)."""
    return page.locator("#play-form-col .error, #play-scene-col .error, "
                        "#play-memory-col .error").count()


def wait_text(page, selector: str, text: str, timeout: float = 90) -> str:
    """Wait until the element's text contains `text` (polled; bounded)."""
    deadline = time.monotonic() + timeout
    while text not in (seen := page.locator(selector).inner_text()):
        assert time.monotonic() < deadline, (selector, text, seen)
        page.wait_for_timeout(200)
    return seen


def test_the_new_scene_form_never_touches_the_open_scene(tmp_path, browser):  # noqa: F811
    """Item 1: choosing a story and a You-play character for a new scene leaves the open
    scene as it was (page and database); Start then makes the new scene with them."""
    with scripted_server() as url:
        app = App(tmp_path, url, env=QUIET)
        app.start()
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(app.url)
            open_tab(page, "Play")
            # no scene open: the form's You play is only the form's
            pick_story(page, "Long Winter", "Maren Voss")
            pick(page, "play-you", "Maren Voss")
            # open a scene of another story, played as the director
            pick_story(page, "The Night Ferry", "Isolde Marsh")
            page.locator("#start-scene").click()
            page.wait_for_selector("#scene-title :text('The Night Ferry')", timeout=90_000)
            assert "you play: Director" in page.locator("#scene-title").inner_text()
            # the form now prepares a scene of another story with a character to play
            pick_story(page, "Long Winter", "Maren Voss")
            pick(page, "play-you", "Maren Voss")
            page.locator("#user-line textarea").click()  # let any event land
            title = page.locator("#scene-title").inner_text()
            assert "The Night Ferry" in title and "you play: Director" in title
            assert "as narration" in page.locator("#user-line").inner_text()
            assert "Director" in page.locator("#scene-you input").input_value()
            store = Store(tmp_path / "bookmarks.db")
            (first,) = store.list_scenes()
            assert first.settings.get("you") is None and "Night Ferry" in first.title
            store.close()
            # Start makes the new scene, as the form said
            page.locator("#start-scene").click()
            page.wait_for_selector("#scene-title :text('Long Winter')", timeout=90_000)
            assert "you play: Maren Voss" in page.locator("#scene-title").inner_text()
            wait_text(page, "#user-line", "as Maren Voss")
            # the open scene's own You play changes that scene only
            pick(page, "scene-you", "Director")
            wait_text(page, "#scene-title", "you play: Director")
            shot(page, "w1-form-isolation")
            store = Store(tmp_path / "bookmarks.db")
            scenes = {s.title.split(" — ")[0]: s for s in store.list_scenes()}
            assert scenes["The Night Ferry"].settings.get("you") is None
            assert scenes["The Long Winter at Harrowgate"].settings.get("you") is None
            store.close()
            assert error_badges(page) == 0
        finally:
            app.stop()
    log = app_log(app)
    assert "enough output values" not in log and "not in the list of choices" not in log


def test_an_error_is_said_once_and_the_form_stays(tmp_path, browser):  # noqa: F811
    """Item 2: Next, Start scene and Export before anything is chosen each say what to do
    once, where it was asked; no output gets an error badge, no dropdown is replaced."""
    with scripted_server() as url:
        app = App(tmp_path, url, env=QUIET)
        app.start()
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(app.url)
            open_tab(page, "Play")
            page.locator("#next-turn").click()
            page.wait_for_selector("#play-status :text('Start or resume a scene first')",
                                   timeout=90_000)
            page.locator("#start-scene").click()
            page.wait_for_selector("#form-status :text('Choose a story first')", timeout=90_000)
            page.locator("#export-scene").click()
            page.locator("#regenerate").click()
            page.wait_for_selector("#play-status :text('Start or resume a scene first')",
                                   timeout=90_000)
            body = page.locator("body").inner_text()
            assert body.count("Choose a story first") == 1, body
            assert body.count("Start or resume a scene first") == 1, body
            assert error_badges(page) == 0
            for elem_id in ("play-you", "scene-you", "play-scenes", "play-story"):
                assert page.locator(f"#{elem_id} input").count() == 1, elem_id
            assert not page.locator("#export-file").is_visible()
            shot(page, "w2-errors-said-once")
            # then a scene starts and the messages go: nothing is left marked
            pick_story(page, "The Night Ferry", "Isolde Marsh")
            page.locator("#start-scene").click()
            page.wait_for_selector("#scene-title :text('The Night Ferry')", timeout=90_000)
            page.locator("#next-turn").click()
            page.wait_for_selector("#memory-panel :text('Grounding the actor saw')",
                                   timeout=120_000)
            assert "Choose a story first" not in page.locator("body").inner_text()
            assert "Start or resume" not in page.locator("body").inner_text()
            page.locator("#export-scene").click()
            page.wait_for_selector("#export-file a", timeout=90_000)
            assert error_badges(page) == 0
        finally:
            app.stop()


def test_first_visit_says_where_to_start_until_dismissed(tmp_path, browser):  # noqa: F811
    with scripted_server() as url:
        app = App(tmp_path, url, env=QUIET)
        app.start()
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(app.url)
            page.wait_for_selector("#start-here :text('Start here')", timeout=90_000)
            text = page.locator("#start-here").inner_text()
            assert "Library" in text and "Play" in text and "Start scene" in text
            page.locator("#start-here-dismiss").click()
            page.wait_for_selector("#start-here", state="hidden", timeout=90_000)
            page.reload()
            page.wait_for_selector("#library-stories :text('The Night Ferry')", timeout=90_000)
            page.locator("#library-story input").click()  # the page is live
            assert not page.locator("#start-here").is_visible()
            context.close()
        finally:
            app.stop()



def _db(tmp_path, sql: str, params=()) -> list[dict]:
    with sqlite3.connect(tmp_path / "bookmarks.db") as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute(sql, params)]


def _events(tmp_path, turn_id: int, kind: str) -> list[dict]:
    return [json.loads(r["payload"]) for r in _db(
        tmp_path, "SELECT payload FROM turn_events WHERE turn_id = ? AND kind = ? ORDER BY seq",
        (turn_id, kind))]


def _last_turn(tmp_path) -> dict:
    return _db(tmp_path, "SELECT * FROM turns ORDER BY id DESC LIMIT 1")[0]


def test_panel_figures_are_the_call_logs(tmp_path, browser):  # noqa: F811
    """Item 3: after Regenerate (memory reused, nothing read) the cost without reuse is
    what reading those actions cost when they were read — the call log's tokens — not 0; a
    second scene whose synchronization the reply cache served says "from cache" with what
    the same work first cost: the call log's calls and tokens for it."""
    one = ScriptedMemory(sections=[{"title": "Wren Adeyemi's plan", "type": "state",
                                    "subject": "Wren Adeyemi"}])
    with scripted_server(one) as url:
        app = App(tmp_path, url, env=QUIET)
        app.start()
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(app.url)
            open_tab(page, "Play")
            pick_story(page, "The Night Ferry", "Isolde Marsh")
            page.locator("#start-scene").click()
            page.wait_for_selector("#scene-title :text('The Night Ferry')", timeout=90_000)
            page.locator("#next-turn").click()
            page.wait_for_selector("#memory-panel :text('initialized')", timeout=120_000)
            page.locator("#regenerate").click()
            page.wait_for_selector("#memory-panel :text('reused')", timeout=120_000)
            panel = page.locator("#memory-panel").inner_text()
            found = re.search(r"read 0 actions \(without reuse (\d+)\), 0 calls, 0 tokens "
                              r"\(without reuse ≈(\d+)\)", panel)
            assert found, panel
            (sync,) = _events(tmp_path, _last_turn(tmp_path)["id"], "synchronized")
            spent = _db(tmp_path, "SELECT SUM(prompt_tokens + completion_tokens) AS t FROM "
                                  "llm_calls WHERE role = 'memory' AND ok = 1 AND cached = 0 "
                                  "AND purpose LIKE 'sync:%'")[0]["t"]
            assert int(found.group(1)) == sync["actions_read_wo"] == sync["p_new"] > 0
            assert int(found.group(2)) == spent > 0  # the first reading of those actions
            meter = page.locator("#cost-meter").inner_text()
            saved = int(re.search(r"saved ≈(\d+) tokens by reuse", meter).group(1))
            assert saved > 0, meter
            shot(page, "w3-regenerated-panel")
            # a second scene at the same point: its synchronization is the reply cache's
            page.locator("#start-scene").click()
            page.wait_for_selector("#scene-title :text('you play')", timeout=90_000)
            page.wait_for_selector("#memory-panel :text('Select a model turn')", timeout=90_000)
            page.locator("#next-turn").click()
            page.wait_for_selector("#memory-panel :text('from cache')", timeout=120_000)
            panel = page.locator("#memory-panel").inner_text()
            first = re.search(r"from cache: this work first took (\d+) calls?, (\d+) tokens",
                              panel)
            assert first, panel
            (sync,) = _events(tmp_path, _last_turn(tmp_path)["id"], "synchronized")
            first_scene = _db(tmp_path, "SELECT MIN(id) AS id FROM scenes")[0]["id"]
            logged = _db(tmp_path, "SELECT COUNT(*) AS n, SUM(prompt_tokens + "
                                   "completion_tokens) AS t FROM llm_calls WHERE scene_id = ? "
                                   "AND cached = 0 AND ok = 1 AND purpose LIKE 'sync:%'",
                         (first_scene,))[0]
            assert (int(first.group(1)), int(first.group(2))) == (logged["n"], logged["t"])
            assert sync["calls"] < logged["n"]
            assert f"without reuse ≈{logged['t']})" in panel
            assert "served from the reply cache" in page.locator("#cost-meter").inner_text()
            shot(page, "w3-from-cache")
        finally:
            app.stop()


MARISOL = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {
    "name": "Marisol Quill", "description": "A cartographer who maps tides by ear.",
    "first_mes": "Seven waves, {{user}}. Then the gate sings.", "mes_example": "",
    "character_book": {"entries": [
        {"keys": ["Shadowfang Beast"], "content": "Shadowfang beasts fear brass whistles.",
         "comment": "Shadowfang", "enabled": True, "insertion_order": 30},
        {"keys": ["moor"], "content": "The moor floods at spring tide.", "comment": "The moor",
         "enabled": True, "insertion_order": 20}]}}}


def test_a_card_alone_plays_on_an_empty_stage_and_lore_says_why(tmp_path, browser):  # noqa: F811
    """Items 6 and 4: right after upload a card is previewed and its character is in the
    cast and You-play lists; with no story it starts a scene on an empty stage; a plural
    mention grounds a singular lore key, and the panel lists card and lore memory with why
    each entry grounded the line or not."""
    card = tmp_path / "marisol.json"
    card.write_text(json.dumps(MARISOL))
    with scripted_server(ScriptedMemory(sections=[])) as url:
        app = App(tmp_path, url, env=QUIET)
        app.start()
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(app.url)
            open_tab(page, "Play")
            # with a story: the card's character joins its cast before any scene starts
            pick_story(page, "The Night Ferry", "Isolde Marsh")
            page.locator("#card-upload input[type=file]").set_input_files(str(card))
            page.wait_for_selector("#card-preview :text('Marisol Quill')", timeout=90_000)
            assert "maps tides by ear" in page.locator("#card-preview").inner_text()
            assert "2 lorebook entries" in page.locator("#card-preview").inner_text()
            page.wait_for_selector("#play-cast :text('Marisol Quill')", timeout=90_000)
            assert "Isolde Marsh" in page.locator("#play-cast").inner_text()
            pick(page, "play-you", "Marisol Quill")
            shot(page, "w6-card-previewed")
            # no story: a card alone
            page.reload()
            open_tab(page, "Play")
            page.locator("#card-upload input[type=file]").set_input_files(str(card))
            page.wait_for_selector("#play-cast :text('Marisol Quill')", timeout=90_000)
            page.wait_for_selector("#play-cast :text('You')", timeout=90_000)
            pick(page, "play-you", "You")
            page.locator("#start-scene").click()
            page.wait_for_selector("#scene-title :text('on an empty stage')", timeout=90_000)
            assert "you play: You" in page.locator("#scene-title").inner_text()
            page.wait_for_selector("#scene-chat :text('Then the gate sings')", timeout=90_000)
            page.locator("#user-line textarea").fill("Beware the Shadowfang beasts tonight.")
            page.locator("#send-line").click()
            page.wait_for_selector("#scene-chat :text('Shadowfang beasts tonight')",
                                   timeout=90_000)
            page.locator("#next-turn").click()
            page.wait_for_selector("#memory-panel :text('Turn 3 · Marisol Quill')",
                                   timeout=120_000)
            panel = page.locator("#memory-panel").inner_text()
            assert "Card and lore memory" in panel, panel
            assert re.search(r"grounded\s*Shadowfang \(mentioned: Shadowfang Beast\)", panel)
            assert re.search(r"not used\s*The moor \(no key mentioned in the last 6 lines "
                             r"\(keys: moor\)\)", panel), panel
            assert re.search(r"grounded\s*Who Marisol Quill is", panel)
            assert "fear brass whistles" in panel and "floods at spring tide" not in panel
            shot(page, "w4-lore-explained")
            assert error_badges(page) == 0
        finally:
            app.stop()


class HeldSyncMemory(Held):
    """Held (synchronizations held until `release`), counting the requests it is sent."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.asked = 0
        self._count = threading.Lock()

    def __call__(self, request):
        with self._count:
            self.asked += 1
        return super().__call__(request)


def test_prepare_chosen_characters_with_progress_and_a_prompt_stop(tmp_path, browser):  # noqa: F811
    """Item 5: the Library prepares the characters chosen, says what would be cheaper,
    shows progress within a step (the bookmark synchronizing, actions read), and Stop stops
    within the step, not after it: the step's first block is held at the model, and no
    further call is sent after Stop (at most one that was starting as Stop was clicked)."""
    memory = HeldSyncMemory(sections=[
        {"title": "Maren Voss's ledger", "type": "state", "subject": "Maren Voss"}])
    with scripted_server(memory) as url:
        app = App(tmp_path, url, env=QUIET)
        app.start()
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(app.url)
            pick(page, "library-story", "Long Winter")
            page.get_by_text("Prepare memory").click()
            page.wait_for_selector("#prepare-characters :text('Silas Grint')", timeout=90_000)
            fill_number(page, "#prepare-every input", "1000")
            page.locator("#prepare-estimate").click()
            page.wait_for_selector("#prepare-status :text('Cheaper')", timeout=90_000)
            estimate = page.locator("#prepare-status").inner_text()
            assert "4 characters" in estimate and "only Maren Voss" in estimate, estimate
            for name in ("Tobias Crane", "Elsbeth Harrow", "Silas Grint"):
                page.locator("#prepare-characters").get_by_text(name, exact=True).click()
            page.locator("#prepare-estimate").click()
            page.wait_for_selector("#prepare-status :text('1 characters')", timeout=90_000)
            page.locator("#prepare-btn").click()
            page.wait_for_selector("#prepare-status :text('actions read')", timeout=120_000)
            status = page.locator("#prepare-status").inner_text()
            assert "step 1 of 1 — checkpoint 1000 for Maren Voss" in status, status
            assert "Maren Voss's ledger (state): block" in status, status
            shot(page, "w5-preparing")
            asked = memory.asked
            page.locator("#prepare-stop").click()
            page.wait_for_selector("#prepare-status :text('Stopped')", timeout=90_000)
            assert memory.asked - asked <= 2, f"{memory.asked - asked} calls after Stop"
            assert "0 of 1 steps saved for Maren Voss" in page.locator("#prepare-status").inner_text()
            shot(page, "w5-stopped")
        finally:
            memory.release.set()
            app.stop()
    store = Store(tmp_path / "bookmarks.db")
    story = store.find_story("The Long Winter at Harrowgate")
    assert not store.get_setting(f"prepared:{story.id}", {}).get("done")
    store.close()
