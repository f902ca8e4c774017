"""End to end in real Chromium (Debian's package) driven by Playwright: import a story,
play two turns with Bookmarks on a scripted OpenAI-compatible server, fork, restart the
app and find the scene and its panel intact; story text is shown escaped."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from bookmarks.models.testing import ScriptedMemory
from tests.conftest import ROOT, STORIES
from tests.fake_server import scripted_server
from tests.tools import INSTALL_CHROMIUM, WAIT_MS, chromium, fill_number, open_tab, pick, pick_story, upload

pytestmark = pytest.mark.browser
OUT = ROOT / "test-output" / "browser"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class App:
    def __init__(self, data_dir: Path, model_url: str, env: dict | None = None):
        self.data_dir, self.model_url, self.env = data_dir, model_url, env or {}
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> None:
        env = {**os.environ, "BOOKMARKS_DATA_DIR": str(self.data_dir),
               "BOOKMARKS_BASE_URL": self.model_url, "BOOKMARKS_API_KEY": "test-key",
               "GRADIO_ANALYTICS_ENABLED": "False", **self.env}
        log = open(self.data_dir / f"app-{time.time():.0f}.log", "wb")
        self.proc = subprocess.Popen([sys.executable, str(ROOT / "app.py"), "--port",
                                      str(self.port)], env=env, stdout=log, stderr=log, cwd=ROOT)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(self.url, timeout=2)
                return
            except OSError:
                assert self.proc.poll() is None, "the app exited while starting"
                time.sleep(0.5)
        raise AssertionError("the app did not start within 240 s")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=20)


@pytest.fixture
def browser():
    executable = chromium()
    if executable is None:
        pytest.fail("Chromium is not installed: README command 2 installs Debian's package when "
                    f"run as root; otherwise run `sudo sh -c '{INSTALL_CHROMIUM}'`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, headless=True, args=FLAGS)
        yield PatientBrowser(b)
        b.close()


class PatientBrowser:
    """The browser, with every page and context waiting up to 90 s for an element before
    an action (Playwright's default is 30 s: on a loaded 2-core machine the Play tab's first
    render took longer)."""

    def __init__(self, browser) -> None:
        self._browser = browser

    def new_page(self, **kwargs):
        page = self._browser.new_page(**kwargs)
        page.set_default_timeout(WAIT_MS)
        return page

    def new_context(self, **kwargs):
        context = self._browser.new_context(**kwargs)
        context.set_default_timeout(WAIT_MS)
        return context

    def __getattr__(self, name):
        return getattr(self._browser, name)


def shot(page, name: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUT / f"{name}.png"), full_page=True)


def test_import_play_fork_restart(tmp_path, browser):
    dialogs = []
    payload = tmp_path / "payload.txt"
    payload.write_text("## One\nMAYA: <script>alert(1)</script><img src=x onerror=alert(2)>\n"
                       "TOM: Plain words.\nMAYA: More words.\n")
    with scripted_server() as model_url:
        app = App(tmp_path, model_url)
        app.start()
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(app.url)
            # Library: upload the short bundled story under a new title
            page.locator("#story-upload input[type=file]").set_input_files(
                str(STORIES / "the_night_ferry.txt"))
            page.wait_for_selector("#library-preview :text('format')", timeout=90_000)
            page.locator("#import-title textarea, #import-title input").first.fill("Ferry upload")
            page.locator("#import-btn").click()
            page.wait_for_selector("#library-status :text('Imported')", timeout=90_000)
            shot(page, "1-library")
            # an HTML/JS payload in story text is shown as text and never runs
            page.locator("#story-upload button[aria-label='Clear']").first.click() \
                if page.locator("#story-upload button[aria-label='Clear']").count() else None
            page.locator("#story-upload input[type=file]").set_input_files(str(payload))
            page.wait_for_selector("#library-preview :text('Plain words')", timeout=90_000)
            assert "<script>alert(1)</script>" in page.locator("#library-preview").inner_text()
            # Play: start a Bookmarks scene and run two turns
            open_tab(page, "Play")
            pick_story(page, "Ferry upload", "Isolde Marsh")
            page.locator("#start-scene").click()
            page.wait_for_selector("#scene-title :text('Bookmarks')", timeout=90_000)
            page.locator("#next-turn").click()
            page.wait_for_selector("#memory-panel :text('initialized')", timeout=120_000)
            page.locator("#next-turn").click()
            page.wait_for_selector("#memory-panel :text('reused')", timeout=120_000)
            panel_text = page.locator("#memory-panel").inner_text()
            assert "from checkpoint p=" in panel_text and "Grounding the actor saw" in panel_text
            shot(page, "2-play-two-turns")
            chat_before = page.locator("#scene-chat").inner_text()
            page.locator("#fork-here").click()
            page.wait_for_selector("#scene-title :text('fork at')", timeout=90_000)
            shot(page, "3-forked")
        finally:
            app.stop()
        # restart the app on the same database: the scene and its panel are intact
        app.start()
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1000})
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(app.url)
            open_tab(page, "Play")
            page.locator("#play-scenes input").click()
            page.get_by_role("option").filter(has_text="Ferry upload").filter(
                has_not_text="fork").first.click()
            page.wait_for_selector("#memory-panel :text('reused')", timeout=90_000)
            chat_after = page.locator("#scene-chat").inner_text()
            assert [ln for ln in chat_after.splitlines() if "[" in ln][-2:] == \
                [ln for ln in chat_before.splitlines() if "[" in ln][-2:]
            shot(page, "4-after-restart")
            # the tab bar stays intact: Settings is reachable, saves, and the API can't save
            open_tab(page, "Settings")
            page.wait_for_selector("text=Test actor", timeout=90_000)
            # typed and committed before Save reads it (a busy run saved the old, empty value)
            fill_number(page, "#judge-model :is(input, textarea) >> nth=0", "judge-x")
            page.locator("#save-settings").click()
            page.wait_for_selector("#settings-status :text('Saved')", timeout=90_000)
            assert "judge-x" in page.locator("#settings-status").inner_text()
            from gradio_client import Client
            api = Client(app.url, verbose=False).view_api(return_format="dict",
                                                         print_info=False)
            assert "/do_save" not in api["named_endpoints"]
            assert "/do_engine" not in api["named_endpoints"]
        finally:
            app.stop()
    assert dialogs == []


def test_blind_annotation(tmp_path, browser):
    """One annotation in the browser: no method name on the page before the vote, the
    sides revealed after it, the buttons locked."""
    from bookmarks.evaluation.arena import generate_starts, run_item
    from bookmarks.models.llm import run_sync
    from bookmarks.models.testing import ScriptedFakeModel
    from bookmarks.store import Store
    from tests.conftest import make_llm
    from tests.engine_helpers import generated_story
    from tests.evaluation.test_arena import ArenaScript

    store = Store(tmp_path / "bookmarks.db")
    sid = store.add_story(generated_story(120))
    fake = ScriptedFakeModel(default=ArenaScript())
    llms = {r: make_llm(fake, store, role=r) for r in ("actor", "memory", "judge")}
    for start in run_sync(generate_starts(store, llms["memory"], sid, 2)):
        run_sync(run_item(store, llms, start, turns=2))
    store.close()
    with scripted_server() as model_url:
        app = App(tmp_path, model_url)
        app.start()
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(app.url)
            open_tab(page, "Annotate")
            page.locator("#annotate-next").click()
            page.wait_for_selector("#annotate-progress :text('Item 1 of 2')", timeout=90_000)
            body = page.locator("body").inner_text()
            for name in ("Bookmarks vs", "3-way ETA", "eta3", "was Bookmarks"):
                assert name not in body
            assert "You came back." in page.locator("#annotate-start").inner_text()
            shot(page, "5-annotate-before-vote")
            page.locator("#vote-a").click()
            page.wait_for_selector("#annotate-reveal :text('was')", timeout=90_000)
            reveal = page.locator("#annotate-reveal").inner_text()
            assert "Bookmarks" in reveal and "3-way ETA" in reveal
            assert page.locator("#vote-b").is_disabled()
            shot(page, "6-annotate-after-vote")
        finally:
            app.stop()
    store = Store(tmp_path / "bookmarks.db")
    (vote_row,) = store.judgments()
    # no accounts: the single local user is the annotator (no name is typed on the page)
    assert vote_row["annotator"] == "local" and vote_row["vote"] == "left"
    assert vote_row["seconds"] is not None


SYNC = frozenset({"joint", "concept", "state", "first_state", "behavioral"})


class Held(ScriptedMemory):
    """Holds requests of the given kinds (once `armed`) until `release` is set, bounded, so
    the page can be seen in a passing state — a turn waiting on memory, a line being
    regenerated — however fast or slow the machine is (test double)."""

    def __init__(self, *args, kinds=SYNC, armed=True, **kwargs):
        super().__init__(*args, **kwargs)
        self.kinds, self.armed, self.release = kinds, threading.Event(), threading.Event()
        if armed:
            self.armed.set()

    def __call__(self, request):
        if self.armed.is_set() and self.kind(request) in self.kinds:
            self.release.wait(120)
        return super().__call__(request)


def test_a_waiting_turn_shows_what_memory_is_doing(tmp_path, browser):
    """Without background work, a turn late in a story waits on synchronization: the
    scene line says which bookmark is synchronizing, block k of n, actions read."""
    memory = Held(sections=[
        {"title": "Wren Adeyemi's plan", "type": "state", "subject": "Wren Adeyemi"}])
    with scripted_server(memory) as model_url:
        app = App(tmp_path, model_url, env={"BOOKMARKS_BACKGROUND_SYNC": "0"})
        app.start()
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(app.url)
            open_tab(page, "Play")
            pick_story(page, "The Night Ferry", "Isolde Marsh")
            page.locator("#start-scene").click()
            page.wait_for_selector("#scene-title :text('Bookmarks')", timeout=90_000)
            page.locator("#next-turn").click()
            page.wait_for_selector("#scene-chat :text('synchronizing')", timeout=90_000)
            waiting = page.locator("#scene-chat").inner_text()
            assert "block" in waiting and "actions read" in waiting
            shot(page, "7-waiting-on-memory")
            memory.release.set()
            page.wait_for_selector("#memory-panel :text('initialized')", timeout=120_000)
        finally:
            memory.release.set()
            app.stop()


def test_prepare_memory_from_the_library(tmp_path, browser):
    """Library: estimate, then prepare a story's memory; the table says how far."""
    with scripted_server() as model_url:
        app = App(tmp_path, model_url)
        app.start()
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            page.goto(app.url)
            pick(page, "library-story", "The Night Ferry")
            page.get_by_text("Prepare memory").click()
            page.wait_for_selector("#prepare-characters :text('Isolde Marsh')", timeout=90_000)
            fill_number(page, "#prepare-every input", "50")
            page.locator("#prepare-estimate").click()  # the server has the 50 before Prepare
            page.wait_for_selector("#prepare-status :text('every 50 actions')", timeout=90_000)
            page.locator("#prepare-btn").click()
            page.wait_for_selector("#prepare-status :text('Prepared')", timeout=90_000)
            assert "steps, memory up to action 150" in page.locator("#prepare-status").inner_text()
            # the table refreshes right after the status: wait for it, do not race it
            deadline = time.monotonic() + 90
            while "to action 150 (every 50; done)" not in (
                    table := page.locator("#library-stories").inner_text()):
                assert time.monotonic() < deadline, table
                page.wait_for_timeout(250)
            shot(page, "8-library-prepared")
        finally:
            app.stop()


def test_reload_edit_box_regenerate_and_empty_annotate(tmp_path, browser):
    """An import shows after a reload; the edit box loads the selected line; regenerate
    streams into the scene; Annotate says where items come from when there are none."""
    memory = Held(sections=[
        {"title": "Wren Adeyemi's plan", "type": "state", "subject": "Wren Adeyemi"}],
        kinds={"act"}, armed=False)
    with scripted_server(memory) as url:
        app = App(tmp_path, url)
        app.start()
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            page.goto(app.url)
            bad = tmp_path / "bad.jsonl"
            bad.write_text('{"character": "A", "text": "ok"}\n{"character": "B", "text": \n')
            page.locator("#story-upload input[type=file]").set_input_files(str(bad))
            page.wait_for_selector("#library-preview :text('cannot be imported')", timeout=90_000)
            assert "bad.jsonl, line 2" in page.locator("#library-preview").inner_text()
            page.locator("#import-btn").click()
            page.wait_for_selector("#library-status :text('Not imported')", timeout=90_000)
            assert "line 2" in page.locator("#library-status").inner_text()
            page.locator("#story-upload button[aria-label='Clear']").first.click()
            page.locator("#story-upload input[type=file]").set_input_files(
                str(STORIES / "the_night_ferry.txt"))
            page.wait_for_selector("#library-preview :text('format')", timeout=90_000)
            page.locator("#import-title textarea, #import-title input").first.fill("Reload check")
            page.locator("#import-btn").click()
            page.wait_for_selector("#library-status :text('Imported')", timeout=90_000)
            page.reload()
            page.wait_for_selector("#library-stories :text('Reload check')", timeout=90_000)
            pick(page, "library-story", "Reload check")
            shot(page, "9-library-after-reload")
            open_tab(page, "Play")
            pick_story(page, "Reload check", "Isolde Marsh")
            page.locator("#start-scene").click()
            page.wait_for_selector("#scene-title :text('Bookmarks')", timeout=90_000)
            page.locator("#next-turn").click()
            page.wait_for_selector("#memory-panel :text('initialized')", timeout=90_000)
            assert re.search(r"\(#\d+, state, as of action \d+\)",
                             page.locator("#memory-panel").inner_text())  # piece → bookmark
            line = page.locator("#scene-chat").inner_text().strip().splitlines()[-1]
            page.get_by_text("Edit the selected line").click()
            box = page.locator("#edit-text textarea").input_value()
            assert box and box in line, (box, line)
            memory.armed.set()  # the regenerated line waits until the page has been seen
            page.locator("#regenerate").click()
            page.wait_for_selector("#scene-chat :text('regenerating')", timeout=90_000)
            shot(page, "10-regenerating")
            memory.release.set()
            page.wait_for_selector("#scene-chat :text('regenerating')", state="detached",
                                   timeout=90_000)
            open_tab(page, "Annotate")
            page.locator("#annotate-next").click()
            page.wait_for_selector("text=Nothing to judge yet", timeout=90_000)
            shot(page, "11-annotate-empty")
        finally:
            memory.release.set()
            app.stop()


@contextlib.contextmanager
def long_winter_in_library(tmp_path, browser):
    """The app on the scripted server (no background preparation), a page open on the
    Library with The Long Winter at Harrowgate chosen."""
    with scripted_server() as url:
        app = App(tmp_path, url, env={"BOOKMARKS_BACKGROUND_SYNC": "0"})
        app.start()
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1200})
            page.goto(app.url)
            pick(page, "library-story", "Long Winter")
            yield page
        finally:
            app.stop()


def test_presence_view_and_a_witnessed_scene(tmp_path, browser):
    with long_winter_in_library(tmp_path, browser) as page:
        page.get_by_text("Who is present").click()
        page.wait_for_selector("#presence-table :text('Maren Voss')", timeout=90_000)
        assert "Hester Grint" in page.locator("#presence-table").inner_text()
        # line by line in the storyline, and a correction shows there at once
        present = page.locator("#library-storyline [data-testid='cell-2-4']")  # action 3's
        assert present.inner_text().strip() == "Maren Voss, Nell Cobb"
        pick(page, "presence-who", "Hester Grint")
        fill_number(page, "#presence-first input", "3")
        fill_number(page, "#presence-last input", "4")
        page.locator("#presence-apply").click()
        page.wait_for_selector("#library-storyline [data-testid='cell-2-4'] :text('Hester Grint')",
                               timeout=90_000)
        assert "Hester Grint" not in page.locator(
            "#library-storyline [data-testid='cell-4-4']").inner_text()  # action 5: not marked
        shot(page, "12-presence-view")
        open_tab(page, "Play")
        pick_story(page, "Long Winter", "Maren Voss")
        fill_number(page, "#play-point input", "300")
        page.get_by_text("More: your own character").click()  # the form's other options
        page.locator("#play-knowledge").get_by_text("witnessed", exact=True).click()
        page.locator("#start-scene").click()
        page.wait_for_selector("#scene-title :text('witnessed')", timeout=90_000)
        page.locator("#next-turn").click()
        page.wait_for_selector("#memory-panel :text('Witnessed knowledge of')", timeout=120_000)
        assert "out of their sight" in page.locator("#memory-panel").inner_text()
        shot(page, "13-witnessed-scene")


def test_the_library_reads_a_storys_file_again(tmp_path, browser):
    """The kept file read with today's rules: a story they read the same is not imported
    twice (tests/store/test_import_again.py covers one they read differently)."""
    with long_winter_in_library(tmp_path, browser) as page:
        page.get_by_text("Read the file again (current import rules)").click()
        page.locator("#again-btn").click()
        page.wait_for_selector("#again-status :text('nothing to import again')", timeout=90_000)


def test_a_writer_corrects_a_lines_speaker_in_the_library(tmp_path, browser):
    with long_winter_in_library(tmp_path, browser) as page:
        page.get_by_text("Correct a line").click()
        cell = page.locator("#library-storyline [data-testid='cell-2-3']")  # action 3's text
        cell.wait_for(timeout=90_000)
        text = cell.inner_text().strip()
        cell.click()  # the click picks the line: its number and text
        page.wait_for_function("() => document.querySelector('#line-index input').value == '3'",
                               timeout=90_000)
        page.wait_for_function("t => document.querySelector('#line-text textarea').value"
                               ".trim().startsWith(t)", arg=text[:30], timeout=90_000)
        # where it stands in the file: its own line marked, with its cue, between its neighbours
        page.wait_for_function("() => document.querySelector('#line-source textarea').value"
                               ".includes('▶      6  MAREN VOSS: Three things')", timeout=90_000)
        source = page.locator("#line-source textarea").input_value()
        assert "[Enter MAREN VOSS" in source and "NELL COBB: Nobody ever" in source
        speaker = page.locator("#line-speaker input")
        speaker.fill("Old Ned")
        speaker.press("Enter")
        page.locator("#line-apply").click()
        page.wait_for_selector("#line-status :text('Line 3 is now Old Ned')", timeout=90_000)
        page.wait_for_selector("#library-storyline [data-testid='cell-2-2'] :text('Old Ned')",
                               timeout=90_000)  # the storyline shows it
        shot(page, "14-line-corrected")
        pick(page, "storyline-view", "Old Ned")  # one character's lines: the one line
        page.wait_for_selector("#library-summary :text('Showing 1 line:')", timeout=90_000)
        cells = page.locator("#library-storyline")
        assert cells.locator("[data-testid='cell-0-0']").inner_text().strip() == "3"
        assert cells.locator("[data-testid='cell-1-0']").count() == 0


def test_a_card_joins_a_scene_and_the_scene_goes_out(tmp_path, browser):
    """Play: a SillyTavern card (PNG, built here) joins the cast, opens with its greeting and
    grounds its character; the scene exports as Fountain."""
    import json as _json
    import struct
    import zlib

    from bookmarks.stories.sillytavern_png import png_with_card

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(
            ">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(b"\x00\x00\x00\x00")) + chunk(b"IEND", b""))
    card = {"spec": "chara_card_v2", "spec_version": "2.0", "data": {
        "name": "Marisol Quill", "description": "A cartographer who maps tides by ear.",
        "first_mes": "Seven waves, {{user}}. Then the gate sings.", "mes_example": ""}}
    path = tmp_path / "marisol.png"
    path.write_bytes(png_with_card(png, _json.dumps(card)))
    with scripted_server() as url:
        app = App(tmp_path, url, env={"BOOKMARKS_BACKGROUND_SYNC": "0"})
        app.start()
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1200})
            page.goto(app.url)
            open_tab(page, "Play")
            pick_story(page, "The Night Ferry", "Isolde Marsh")
            upload(page, "#card-upload", str(path), "marisol.png")
            page.locator("#start-scene").click()
            page.wait_for_selector("#scene-chat :text('Then the gate sings')", timeout=90_000)
            page.locator("#next-turn").click()  # round robin: Isolde, then Wren, then Marisol
            page.wait_for_selector("#memory-panel :text('Grounding the actor saw')", timeout=120_000)
            page.locator("#export-format input").click()
            page.get_by_role("option", name="fountain").click()
            page.locator("#export-scene").click()
            page.wait_for_selector("#export-file a", timeout=90_000)
            shot(page, "14-card-and-export")
        finally:
            app.stop()
    exported = (tmp_path / "exports").glob("scene-*.fountain")
    text = next(exported).read_text()
    assert "MARISOL QUILL" in text and "Then the gate sings." in text
