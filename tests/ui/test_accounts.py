"""Accounts. In-process: every event function is wrapped with its tab's role check, keeps
its kind, and Gradio still fills in its request and progress; a writer reaches only their
own scenes. In real Chromium: the owner signs in, adds an annotator and creates a campaign
(3 starts drawn from a bundled story's storyline × 2 turns, scripted model) from the page;
the annotator signs in in a second browser context, sees only Annotate, votes, and cannot
reach Library, Settings, Evaluate or Campaigns by tab, by direct API call or by file URL."""

from __future__ import annotations

import asyncio
import html
import inspect
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request

import gradio as gr
import pytest
from gradio.helpers import special_args

from bookmarks.config import load_settings
from bookmarks.models.testing import ScriptedFakeModel
from bookmarks.services import Services
from bookmarks.store import Store
from tests.conftest import make_llm
from tests.engine_helpers import generated_story
from tests.fake_server import scripted_server
from tests.tools import fill_number, open_tab
from tests.ui.test_browser import App, browser, shot  # noqa: F401 - the browser fixture
from ui.auth import ASKING
from ui.server import build_app

WAIT = 120_000


class Asking:
    """What Gradio hands a handler after sign-in: the request, with the user's name."""

    def __init__(self, username: str | None):
        self.username = username


@pytest.fixture
def app(tmp_path):
    settings = load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path),
                              "BOOKMARKS_BACKGROUND_SYNC": "0"})
    store = Store(settings.db_path)
    fake = ScriptedFakeModel()
    services = Services(settings=settings, store=store,
                        llms={r: make_llm(fake, store, role=r) for r in ("actor", "memory", "judge")})
    for name, role in (("olga", "owner"), ("ann", "annotator"), ("wes", "writer"),
                       ("wyn", "writer")):
        store.add_user(name, role, f"password-{name}")
    demo = build_app(services)
    yield services, demo
    store.close()


def handler(demo, name: str, tab_input=None):
    found = [f for f in demo.fns.values() if f.fn is not None and f.fn.__name__ == name
             and (tab_input is None or tab_input(f))]
    assert len(found) == 1, (name, len(found))
    return found[0]


def call(block_fn, who: str | None, *args):
    """Call a handler as Gradio does: the arguments it fills in itself added by its rule."""
    filled, *_ = special_args(block_fn.fn, list(args), request=Asking(who))
    result = block_fn.fn(*filled)
    if inspect.iscoroutine(result):
        return asyncio.run(result)
    return result


def test_every_handler_is_guarded_keeps_its_kind_and_gets_its_request_and_progress(app):
    _, demo = app
    fns = [f for f in demo.fns.values() if f.fn is not None]
    assert fns and all(getattr(f.fn, "__bookmarks_guarded__", False) for f in fns)
    for f in fns:  # the kind Gradio saw when the event was registered is the wrapper's kind
        assert f.types_generator == (inspect.isgeneratorfunction(f.fn)
                                     or inspect.isasyncgenfunction(f.fn)), f.fn.__name__
    run = handler(demo, "do_run")  # async generator with a progress tracker
    assert inspect.isasyncgenfunction(run.fn)
    asking = Asking("olga")
    filled, progress_at, _, _ = special_args(run.fn, list(range(7)), request=asking)
    assert filled[0] is asking and progress_at == 8 and isinstance(filled[8], gr.Progress)
    assert filled[1:8] == list(range(7))
    create = handler(demo, "create_campaign")  # its own request parameter is filled in too
    filled, progress_at, _, _ = special_args(create.fn, list(range(12)), request=asking)
    assert filled[0] is asking and filled[13] is asking and progress_at == 14
    assert list(inspect.signature(create.fn).parameters)[0] == ASKING


def test_roles_are_refused_on_the_server(app):
    services, demo = app
    save = handler(demo, "do_save")  # Settings
    delete = handler(demo, "do_delete")  # Library
    for who in ("ann", "wes"):
        with pytest.raises(gr.Error, match=r"Not allowed for your role"):
            call(save, who, *[""] * len(save.inputs))
    with pytest.raises(gr.Error, match=r"Not allowed for your role \(annotator\)"):
        call(delete, "ann", None, False)
    with pytest.raises(gr.Error, match="Sign in first"):
        call(delete, None, None, False)
    services.store.remove_user("wes")  # a removed account's session is refused at once
    with pytest.raises(gr.Error, match="Sign in first"):
        call(delete, "wes", None, False)
    progress = handler(demo, "campaign_progress")
    assert "Enter a campaign id" in call(progress, "olga", None)[1]


def test_a_writer_reaches_only_their_own_scenes(app):
    services, demo = app
    store = services.store
    sid = store.add_story(generated_story(60))

    def scene(title):
        return store.create_scene(sid, start_point=30, cast=["Ada", "Ben"], setting="",
                                  method="bookmarks", title=title, settings={})

    mine, theirs, owners = scene("wes's"), scene("wyn's"), scene("olga's")
    assert store.claim_scene(mine.id, "wes") and store.claim_scene(theirs.id, "wyn")
    resume = handler(demo, "resume")
    label = lambda s: f"{s.id}: {s.title}"  # noqa: E731
    with pytest.raises(gr.Error, match="another writer's"):
        call(resume, "wes", label(theirs))
    with pytest.raises(gr.Error, match="another writer's"):
        call(resume, "wes", label(owners))  # the owner's scenes are not a writer's either
    shown = call(resume, "wes", label(mine))
    picker = next(v for k, v in shown.items() if getattr(k, "elem_id", "") == "play-scenes")
    assert [c.split(":")[0] for c in (x[0] if isinstance(x, list | tuple) else x
                                      for x in picker["choices"])] == [str(mine.id)]
    assert call(resume, "olga", label(theirs))  # the owner sees every scene
    with pytest.raises(gr.Error, match="Not allowed"):
        call(resume, "ann", label(mine))
    undo = handler(demo, "undo")
    with pytest.raises(gr.Error, match="another writer's"):
        call(undo, "wes", theirs.id)
    load = handler(demo, "on_load")  # the page's list of past scenes, per user
    ids = lambda update: [c.split(":")[0] for c in update["choices"]]  # noqa: E731
    assert ids(call(load, "wes")[-1]) == [str(mine.id)]
    assert ids(call(load, "ann")[-1]) == []
    assert sorted(ids(call(load, "olga")[-1])) == sorted(str(s.id) for s in (mine, theirs, owners))
    picker = next(b for b in demo.blocks.values() if getattr(b, "elem_id", "") == "play-scenes")
    assert picker.choices == []  # none of them in the page everyone is sent


def sign_in(page, url: str, name: str, password: str) -> None:
    page.goto(url)
    page.get_by_label("username").fill(name)
    page.get_by_label("password").fill(password)
    page.get_by_role("button", name="Login").click()
    page.wait_for_selector("#main-tabs", timeout=WAIT)


def tab_names(page) -> list[str]:
    """The visible tabs' names, read in one go in the page: listing the tabs and then reading
    each by its index raced the page hiding tabs for the signed-in role (the third of four
    tabs was gone before it was read, and the read waited for it)."""
    return page.eval_on_selector_all(
        "[role=tab]", "els => els.filter(e => e.offsetParent !== null && "
        "getComputedStyle(e).visibility !== 'hidden').map(e => e.innerText.trim())")


def wait_for_text(page, selector: str, pattern: str, timeout_s: float = 300) -> str:
    deadline = time.monotonic() + timeout_s
    while not re.search(pattern, text := page.locator(selector).inner_text()):
        assert time.monotonic() < deadline, f"{selector}: {text!r}"
        page.wait_for_timeout(250)
    return text


def fn_index(app: App, name: str, cookies: str) -> tuple[int, list]:
    """A registered function's index and a valid input for it (each input component's
    default value), from the app's config as any client sees it."""
    req = urllib.request.Request(app.url + "config", headers={"Cookie": cookies})
    with urllib.request.urlopen(req, timeout=30) as r:
        config = json.load(r)
    values = {c["id"]: c.get("props", {}).get("value") for c in config["components"]}
    dep = next(d for d in config["dependencies"] if d.get("api_name") == name)
    return dep["id"], [values.get(i) for i in dep["inputs"]]


def direct_call(app: App, cookies: str, fn: int, data: list) -> str:
    """Join the queue for a function by its index with this session's cookie, as a hand-made
    client would, and return the outcome message."""
    session = f"direct{fn}"
    body = json.dumps({"fn_index": fn, "data": data, "session_hash": session,
                       "event_data": None, "trigger_id": None}).encode()
    req = urllib.request.Request(app.url + "gradio_api/queue/join", data=body, method="POST",
                                 headers={"Content-Type": "application/json", "Cookie": cookies})
    urllib.request.urlopen(req, timeout=30).read()
    stream = urllib.request.Request(app.url + f"gradio_api/queue/data?session_hash={session}",
                                    headers={"Cookie": cookies})
    with urllib.request.urlopen(stream, timeout=120) as r:
        for raw in r:
            line = raw.decode().strip()
            if line.startswith("data:") and '"process_completed"' in line:
                return line
    return ""


def test_exported_files_are_served_by_role(app, tmp_path):
    from ui.auth import Access, ExportsGuard

    services, _ = app
    folder = tmp_path / "exports"
    store = services.store
    sid = store.add_story(generated_story(40))
    scene = store.create_scene(sid, start_point=20, cast=["Ada", "Ben"], setting="",
                               method="bookmarks", title="t", settings={})
    store.claim_scene(scene.id, "wes")

    async def inner(scope, receive, send):
        await send({"type": "served"})

    guard = ExportsGuard(inner, access=Access(store, env={}), folder=folder)

    class GradioApp:  # what Gradio's app holds: the sign-in cookie's name and its sessions
        cookie_id = "c1"
        tokens = {"t-ann": "ann", "t-wes": "wes", "t-olga": "olga"}

    def ask(token: str, path) -> bool:
        sent: list[dict] = []

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "app": GradioApp(),
                 "path": "/gradio_api/file=" + urllib.parse.quote(str(path)),
                 "headers": [(b"cookie", f"access-token-c1={token}".encode())]}
        asyncio.run(guard(scope, None, send))
        return sent[0]["type"] == "served"

    assert ask("t-olga", folder / "votes.csv") and not ask("t-ann", folder / "votes.csv")
    assert not ask("t-ann", folder / f"scene-{scene.id}.md")
    assert ask("t-wes", folder / f"scene-{scene.id}.md")
    assert not ask("t-wes", folder / f"scene-{scene.id + 1}.md")
    assert not ask("t-wes", folder / "campaign-1.csv")
    assert ask("t-wes", folder / "story-3-jsonl" / "story.jsonl")
    assert not ask("t-nobody", folder / "votes.csv")
    assert not ask("t-ann", folder / ".." / "exports" / "votes.csv")
    assert ask("t-ann", tmp_path / "elsewhere.txt")  # Gradio's own checks apply there


def test_evaluate_arena_says_refused_starts_in_words_in_place(app):
    services, demo = app
    sid = services.store.add_story(generated_story(120))
    services.llms["memory"].model.default = lambda request: json.dumps(
        {"setting": "Ada", "first_line": "You came back."})  # a name is no setting
    generate = handler(demo, "do_generate")

    async def run(source):
        return await generate.fn(Asking("olga"), f"{sid}: Generated", 2, source)

    said, table = asyncio.run(run("model"))
    assert said.startswith("0 of 2 starting scenes written by the model.")
    assert "the setting 'Ada' is only a name, not a setting" in html.unescape(said)
    assert "Error" not in said and "StartDraft" not in said
    said, table = asyncio.run(run("storyline"))
    assert said.startswith("2 of 2 starting scenes drawn from the storyline") and len(table) == 2


@pytest.mark.browser
def test_owner_runs_a_campaign_and_the_annotator_sees_only_their_work(tmp_path, browser):  # noqa: F811
    store = Store(load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path)}).db_path)
    store.add_user("olga", "owner", "owner-password-1")
    store.close()
    with scripted_server() as model_url:
        app = App(tmp_path, model_url)
        app.start()
        try:
            owner = browser.new_context(viewport={"width": 1500, "height": 1200}).new_page()
            sign_in(owner, app.url, "olga", "owner-password-1")
            assert {"Library", "Play", "Annotate", "Evaluate", "Campaigns", "Settings"} <= \
                set(tab_names(owner))
            open_tab(owner, "Campaigns")
            owner.locator("#user-name input, #user-name textarea").first.fill("ann")
            owner.locator("#user-add").click()
            said = wait_for_text(owner, "#user-status", r"password", 90)
            password = re.search(r"send it to them: (\S+)", said).group(1)
            # a new campaign: 3 starts drawn from the storyline, 2 turns each
            owner.locator("#campaign-name input, #campaign-name textarea").first.fill("pilot")
            owner.locator("#campaign-story input").click()
            owner.get_by_role("option", name="The Night Ferry").first.click()
            fill_number(owner, "#campaign-turns input", "2")
            fill_number(owner, "#campaign-k input", "1")
            owner.locator("#campaign-annotators").get_by_text("ann", exact=True).click()
            owner.locator("#campaign-create").click()
            wait_for_text(owner, "#campaign-status", r"created with 3 items", 600)
            # the id box now names the new campaign (progress, close and export act on it)
            deadline = time.monotonic() + 90
            while owner.locator("#campaign-id input").input_value() != "1":
                assert time.monotonic() < deadline, owner.locator("#campaign-id input").input_value()
                owner.wait_for_timeout(250)
            shot(owner, "acc-1-campaign-created")

            annotator = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            sign_in(annotator, app.url, "ann", password)
            deadline = time.monotonic() + 90
            while tab_names(annotator) != ["Annotate"]:
                assert time.monotonic() < deadline, tab_names(annotator)
                annotator.wait_for_timeout(250)
            wait_for_text(annotator, "#annotate-who", r"Signed in as ann \(annotator\)", 90)
            # a first visit says where an annotator starts (not the writers' Library/Play)
            wait_for_text(annotator, "#start-here", r"In Annotate, choose your campaign", 90)
            assert "Library" not in annotator.locator("#start-here").inner_text()
            annotator.locator("#annotate-next").click()
            wait_for_text(annotator, "#annotate-progress", r"Item 1 of 3", 90)
            body = annotator.locator("body").inner_text()
            assert "3-way ETA" not in body and "Bookmarks vs" not in body
            annotator.locator("#vote-b").click()
            wait_for_text(annotator, "#annotate-reveal", r"was", 90)
            deadline = time.monotonic() + 90  # their own progress, updated by the vote
            while (shown := annotator.locator("#annotate-campaign input").input_value()) != \
                    "pilot — 1 of 3 done":
                assert time.monotonic() < deadline, shown
                annotator.wait_for_timeout(250)
            annotator.locator("#annotate-next").click()
            wait_for_text(annotator, "#annotate-progress", r"Item 2 of 3", 90)
            shot(annotator, "acc-2-annotator-only-annotate")

            # the owner sees the annotator's progress and exports the votes
            fill_number(owner, "#campaign-id input", "1")
            owner.locator("#campaign-show").click()
            wait_for_text(owner, "#campaign-progress", r"ann", 90)
            owner.locator("#campaign-export").click()
            owner.wait_for_selector("#campaign-file a", timeout=WAIT)

            # direct calls with the annotator's session are refused on the server
            cookies = "; ".join(f"{c['name']}={c['value']}"
                                for c in annotator.context.cookies())
            for name in ("do_delete", "do_run", "do_save", "create_campaign", "add_account",
                         "campaign_progress", "export_campaign"):
                answer = direct_call(app, cookies, *fn_index(app, name, cookies))
                assert "Not allowed for your role (annotator)" in answer, (name, answer)
            from gradio_client import Client

            client = Client(app.url, auth=("ann", password), verbose=False,
                            download_files=False)
            with pytest.raises(Exception, match="Not allowed for your role"):
                client.predict(None, None, fn_index=fn_index(app, "do_delete", cookies)[0])
            # nor are the exported votes served to them by URL
            export = tmp_path / "exports" / "campaign-1.csv"
            url = app.url + "gradio_api/file=" + urllib.parse.quote(str(export))
            refused = urllib.request.Request(url, headers={"Cookie": cookies})
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(refused, timeout=30)
            assert err.value.code == 403
            mine = "; ".join(f"{c['name']}={c['value']}" for c in owner.context.cookies())
            with urllib.request.urlopen(urllib.request.Request(url, headers={"Cookie": mine}),
                                        timeout=30) as r:
                assert r.read().decode().startswith("campaign,annotator")
        finally:
            app.stop()
    store = Store(load_settings({"BOOKMARKS_DATA_DIR": str(tmp_path)}).db_path)
    (vote,) = store.judgments()
    assert vote["annotator"] == "ann" and vote["vote"] == "right" and vote["campaign_id"] == 1
