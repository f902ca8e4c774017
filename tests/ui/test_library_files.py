"""A story out of the Library and back in, in real Chromium: the export's files uploaded
together bring back the title, the cast and the file the story was read from; a set that
is not one story with its sidecars is refused, naming the file."""

from __future__ import annotations

import re

import pytest

from tests.tools import pick
from tests.ui.test_browser import browser, long_winter_in_library, shot  # noqa: F401 - fixture

pytestmark = pytest.mark.browser
TITLE = "The Long Winter at Harrowgate"


def summary_counts(page) -> tuple[str, str]:
    text = page.locator("#library-summary").inner_text()
    return re.search(r"(\d+) actions, (\d+) characters", text).groups()


def test_an_exported_story_uploaded_with_its_files_comes_back_whole(tmp_path, browser):  # noqa: F811
    with long_winter_in_library(tmp_path, browser) as page:
        page.wait_for_selector("#library-summary :text('actions')", timeout=90_000)
        before = summary_counts(page)
        page.get_by_text("Export the story").click()
        page.locator("#story-export-btn").click()
        page.wait_for_selector("#story-export-files a", timeout=90_000)
        (folder,) = (tmp_path / "exports").glob("story-*-jsonl")
        files = sorted(folder.iterdir())
        assert {f.name.split(".", 1)[1] for f in files} == {
            "jsonl", "meta.json", "questions.jsonl", "source.txt"}
        story_file = next(f for f in files if f.name.endswith(".jsonl")
                          and not f.name.endswith(".questions.jsonl"))
        stray = tmp_path / "notes.txt"
        stray.write_text("Remember the lamp.\n")
        page.locator("#story-upload input[type=file]").set_input_files([str(story_file)])
        page.wait_for_selector("#library-preview :text('No .meta.json came with it')",
                               timeout=90_000)  # alone, it says what it lacks
        page.locator("#story-upload button[aria-label='Clear']").first.click()
        page.locator("#story-upload input[type=file]").set_input_files(
            [str(story_file), str(stray)])
        page.wait_for_selector("#library-preview :text('cannot be imported')", timeout=90_000)
        assert "each a story file" in page.locator("#library-preview").inner_text()
        page.locator("#story-upload button[aria-label='Clear']").first.click()
        page.locator("#story-upload input[type=file]").set_input_files([str(f) for f in files])
        page.wait_for_selector("#library-preview :text('Read with')", timeout=90_000)
        preview = page.locator("#library-preview").inner_text()
        assert TITLE in preview and ".source.txt" in preview and ".meta.json" in preview
        page.locator("#import-btn").click()
        page.wait_for_selector(f"#library-status :text('Imported {TITLE}')", timeout=90_000)
        page.wait_for_selector("#library-summary :text('jsonl format')", timeout=90_000)
        assert summary_counts(page) == before  # every action, the whole cast (by its aliases)
        page.get_by_text("Correct a line").click()
        page.locator("#line-index input").fill("3")
        page.locator("#line-index input").press("Enter")
        page.wait_for_function("() => document.querySelector('#line-source textarea').value"
                               ".includes('▶      6  MAREN VOSS: Three things')", timeout=90_000)
        shot(page, "15-export-uploaded-back")


WAITING = ("Mr. Crowe came in out of the rain and stood by the fire. He looked at the clock.\n\n"
           '"Is the train late?" he asked.\n\n"Ten minutes," said Mrs. Hale.\n\n'
           '"Then I shall wait."\n\n"Do."\n')


def test_the_lines_to_check_by_reason(tmp_path, browser):  # noqa: F811
    """Show → *lines to check: turn-taking* lists that reason's lines only."""
    story = tmp_path / "waiting.txt"
    story.write_text(WAITING, encoding="utf-8")
    with long_winter_in_library(tmp_path, browser) as page:
        page.locator("#story-upload input[type=file]").set_input_files([str(story)])
        page.wait_for_selector("#library-preview :text('format')", timeout=90_000)
        page.locator("#import-btn").click()
        page.wait_for_selector("#library-status :text('Imported Waiting')", timeout=90_000)
        page.wait_for_selector("#library-summary :text('3 lines to check')", timeout=90_000)
        assert "(turn-taking 2, a pronoun tag 1)" in page.locator("#library-summary").inner_text()
        pick(page, "storyline-view", "lines to check: turn-taking")
        page.wait_for_selector("#library-summary :text('Showing 2 lines')", timeout=90_000)
        cells = page.locator("#library-storyline")
        assert cells.locator("[data-testid='cell-0-0']").inner_text().strip() == "4"
        assert cells.locator("[data-testid='cell-1-0']").inner_text().strip() == "5"
        shot(page, "16-lines-to-check-by-reason")
