"""Where the tests find the programs they drive: tools that come with Python packages are
looked up next to the interpreter running the tests (a venv's `bin/`, which need not be on
PATH), then on PATH; the browser is Debian's Chromium, or a Chromium that Playwright
installed itself. A missing tool fails its test with the exact command that installs it.
Also the browser tests' shared ways of typing into the page."""

from __future__ import annotations

import glob
import os
import shutil
import sys
import time
from pathlib import Path

INSTALL_CHROMIUM = "apt-get update && apt-get install -y chromium"


def python_tool(name: str) -> str | None:
    """A console script installed into the running interpreter's environment, else PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(name)


def chromium() -> str | None:
    """Debian's Chromium, else one Playwright downloaded into its cache (where it could)."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    if Path("/usr/bin/chromium").exists():
        return "/usr/bin/chromium"
    cache = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or str(Path.home() / ".cache" / "ms-playwright")
    own = sorted(glob.glob(f"{cache}/chromium-*/chrome-linux*/chrome"))
    return own[-1] if own else None


def fill_number(page, selector: str, value: str) -> None:
    """Type a value into a Gradio number (or text) box and commit it before anything reads it.

    A number box hands its value to the page's state on the input's change event, which the
    browser fires on blur: a click right after `fill` races it, and on a busy machine the click
    can send the old value. Tab commits it first; the box then shows the value. On a busy
    machine a box filled while the page was still setting it up showed its default again (the
    typed value lost): it is typed again until it shows, bounded."""
    box = page.locator(selector)
    deadline = time.monotonic() + 90
    while True:  # a box still being set up can take its first value back: type it again
        box.fill(value)
        box.press("Tab")
        for _ in range(20):
            if box.input_value() == value:
                return
            page.wait_for_timeout(100)
        assert time.monotonic() < deadline, f"{selector} shows {box.input_value()!r}"


def upload(page, selector: str, path: str, shown: str, patience_s: int = 240) -> None:
    """Give a Gradio file box a file and wait until it shows `shown` (its name). On a busy
    machine a file set while the page was still busy with the step before was not taken up
    (the box never showed it in 90 s): it is set again until it shows, bounded — but only
    while the box still has its file input (a box that is uploading has none: setting it
    again would restart an upload that a loaded server is still taking in). In a busy run of
    the whole suite one upload did not show its name within 90 s, so the bound is 240 s, like
    the app's own start; a box that never shows it fails saying what it shows instead."""
    deadline = time.monotonic() + patience_s
    box = page.locator(f"{selector} input[type=file]")
    want = "".join(shown.split())
    while True:
        if box.count():  # once the box has taken the file it has no file input left to set
            box.set_input_files(path)
        if _shows(page, selector, want, 30.0):
            return
        seen = " ".join(page.locator(selector).inner_text().split())  # set it again while
        assert time.monotonic() < deadline, (  # time is left
            f"{selector} never showed {shown!r} in {patience_s} s; it shows {seen!r}"
            f" ({'with' if box.count() else 'without'} a file input)")


def _shows(page, selector: str, want: str, seconds: float) -> bool:
    """The element shows `want`, spaces aside: a file box may show `marisol.png` as `marisol`
    and `.png` apart (its name then reads `marisol .png`)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if want in "".join(page.locator(selector).inner_text().split()):
            return True
        page.wait_for_timeout(200)
    return False


def old_database(path: Path, stop_before: str, n_actions: int):
    """A database as an older version left it: the migrations before `stop_before`
    applied, one story with `n_actions` and its trunk (a sqlite_utils Database, open)."""
    from sqlite_utils import Database

    from bookmarks.store.migrations import migrations

    db = Database(path)
    migrations.apply(db, stop_before=stop_before)
    db["stories"].insert({"id": 1, "title": "S", "n_actions": n_actions, "created_at": "t"})
    db["branches"].insert({"id": 1, "story_id": 1, "fork_point": 0, "name": "trunk",
                           "created_at": "t"})
    return db


WAIT_MS = 90_000  # the longest a browser test waits for an element (a loaded 2-core machine)


def open_tab(page, name: str) -> None:
    """Click a tab and wait until it is the selected one. On a loaded machine a click that
    lands while the page's scripts are still starting can be lost (the Play tab never
    opened and its story list was never found, 90 s later): it is repeated."""
    from playwright.sync_api import expect

    tab = page.get_by_role("tab", name=name)
    deadline = time.monotonic() + WAIT_MS / 1000
    while True:
        tab.click()
        try:
            expect(tab).to_have_attribute("aria-selected", "true", timeout=10_000)
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise


def pick(page, elem_id: str, option: str) -> None:
    """Choose an option of a Gradio dropdown by (part of) its text."""
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=option).first.click()


def pick_story(page, option: str, member: str) -> None:
    """Choose a story in Play and wait until its cast (with `member`) is offered."""
    pick(page, "play-story", option)
    page.wait_for_selector(f"#play-cast :text('{member}')", timeout=90_000)
