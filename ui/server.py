"""Build the Blocks and launch them (used by `app.py` and `bookmarks serve`)."""

from __future__ import annotations

import json
import logging
import sys
import threading

import gradio as gr
from starlette.middleware import Middleware

from bookmarks.models.embedded import stop_on_signals
from bookmarks.services import Services

from .annotate import build_annotate_tab
from .auth import HIDE_TABS, LOCAL_HOSTS, TAB_ROLES, Access, ExportsGuard, ScenePolicy, protect
from .campaigns import build_campaigns_tab
from .evaluate import build_evaluate_tab
from .library import build_library_tab
from .play import build_play_tab, scene_choices
from .render import parse_id
from .settings import build_settings_tab
from .style import CSS

START_HERE = (
    "**Start here.** 1. **Library**: import a story, or use one of the bundled ones. "
    "2. **Play**: choose the story and its cast (or bring a SillyTavern character card "
    "alone), then **Start scene**. 3. **Next** lets the model speak; type a line to speak "
    "yourself. The **Memory** column shows what each line was grounded on.")
START_HERE_ANNOTATOR = (
    "**Start here.** In **Annotate**, choose your campaign and press **Start / next item**. "
    "Read the shared start of the scene, then the two continuations, and vote for the one "
    "that keeps the characters more faithful to the story (or Tie, or Both bad). Which "
    "method wrote each side is shown only after your vote.")

log = logging.getLogger(__name__)


def build_app(services: Services, access: Access | None = None) -> gr.Blocks:
    """The page; every event function is then wrapped with its tab's role check (auth.py)."""
    access = access or Access(services.store)
    with gr.Blocks(title="Bookmarks — role-play with story characters") as demo:
        gr.Markdown("## Bookmarks — role-play with story characters")
        with gr.Row(visible=False, elem_id="start-here") as start_here:
            start_text = gr.Markdown(START_HERE, elem_id="start-here-text")
            dismiss = gr.Button("Got it", size="sm", scale=0, min_width=90,
                                elem_id="start-here-dismiss")
        seen = gr.BrowserState(False, storage_key="bookmarks-start-here-seen")
        with gr.Tabs(elem_id="main-tabs") as tabs:
            library = build_library_tab(services)
            play = build_play_tab(services)
            annotate = build_annotate_tab(services, access)
            build_evaluate_tab(services)
            build_campaigns_tab(services, access)
            build_settings_tab(services)
        shown = [t for t in tabs.children if isinstance(t, gr.Tab)]
        for t in shown:
            t.id = t.id if t.id is not None else str(t.label).lower()
            t.elem_id = t.elem_id or f"tab-{str(t.label).lower()}"
        hidden_tabs = gr.Textbox(visible=False)
        scenes_picker = play.get("scenes")
        if access.enabled and scenes_picker is not None:
            scenes_picker.choices = []  # not in the page for everyone: filled in per user below

        def on_load(request: gr.Request):
            # the tabs this user's role may not use are hidden (and refused anyway: auth.py);
            # the Library refreshes on every page load (other tabs refresh when selected)
            user = access.user(request)
            mine = [t for t in shown if user.role in TAB_ROLES.get(str(t.label), ("owner",))]
            lib = library["refresh"]() if user.role in TAB_ROLES["Library"] else \
                (gr.update(), gr.update())
            picks = annotate["refresh"](request) if user.role == "annotator" else \
                (gr.update(), gr.update())
            hide = json.dumps([t.elem_id for t in shown if t not in mine])
            # the first tab is selected already: selecting it again would undo a click
            # on another tab made before this load event came back
            select = gr.Tabs(selected=mine[0].id) if mine and mine[0] is not shown[0] \
                else gr.update()
            scenes = [c for c in scene_choices(services) if user.role == "owner" or
                      user.role == "writer" and access.may_see_scene(user, parse_id(c, "scene"))]
            return (select, hide, *lib, *picks,
                    *([gr.update(choices=scenes)] if scenes_picker is not None else []))

        demo.load(on_load, None, [tabs, hidden_tabs, library["stories"], library["story"],
                                  *annotate["outputs"],
                                  *([scenes_picker] if scenes_picker is not None else [])]
                  ).then(None, [hidden_tabs], None, js=HIDE_TABS)
        # a first visit says where to start, until dismissed (remembered by the browser)
        def show_start(was_seen, request: gr.Request):
            annotator = access.user(request).role == "annotator"  # sees Annotate only
            return (gr.update(visible=not was_seen),
                    START_HERE_ANNOTATOR if annotator else START_HERE)

        demo.load(show_start, [seen], [start_here, start_text])
        dismiss.click(lambda: (gr.update(visible=False), True), None, [start_here, seen])
    protect(demo, access, scenes=ScenePolicy(play["scene_id"], play["scenes"])
            if "scene_id" in play and "scenes" in play else None)
    return demo


def _warm_embedded(services: Services) -> None:
    """Start the embedded model in the background so the first turn is not slow."""
    actor = services.llms["actor"].model
    start = getattr(actor, "start", None)
    if start is None:
        return

    def run() -> None:
        try:
            start()
            log.info("embedded model ready")
        except Exception as exc:  # noqa: BLE001 - reported, the UI shows it on first use
            log.warning("the embedded model could not start: %s", exc)

    threading.Thread(target=run, daemon=True).start()


def serve(host: str = "127.0.0.1", port: int = 7860, share: bool = False,
          services: Services | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    stop_on_signals()  # SIGTERM stops the app, and with it the embedded model server
    services = services or Services.open()
    services.ensure_bundled()
    _warm_embedded(services)
    access = Access(services.store)  # accounts (bookmarks users add …) → sign-in and roles
    demo = build_app(services, access)
    demo.queue(default_concurrency_limit=4)
    if not access.enabled and (share or host not in LOCAL_HOSTS):
        print(f"WARNING: serving on {'a public share link' if share else host} without accounts: "
              "anyone who can reach it can use every tab, delete stories and change the model "
              "settings. Add users first (bookmarks users add NAME --role owner), or bind to "
              "127.0.0.1.", file=sys.stderr, flush=True)
    print(f"Bookmarks is running on http://{host}:{port}  (data: {services.settings.db_path}; "
          f"{'sign-in required' if access.enabled else 'no accounts: single local user'})",
          flush=True)
    exports = services.settings.data_dir / "exports"
    demo.launch(server_name=host, server_port=port, share=share, auth=access.gradio_auth(),
                app_kwargs={"middleware": [Middleware(ExportsGuard, access=access,
                                                      folder=exports)]},
                max_file_size=services.settings.max_upload_bytes, show_error=False,
                allowed_paths=[str(services.settings.data_dir / "exports")],
                theme=gr.themes.Soft(), css=CSS)
