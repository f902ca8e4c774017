"""Build the Blocks and launch them (used by `app.py` and `bookmarks serve`)."""

from __future__ import annotations

import logging
import os
import threading

import gradio as gr

from bookmarks.models.embedded import stop_on_signals
from bookmarks.services import Services

from .annotate import build_annotate_tab
from .evaluate import build_evaluate_tab
from .library import build_library_tab
from .play import build_play_tab
from .settings import build_settings_tab
from .style import CSS

START_HERE = (
    "**Start here.** 1. **Library**: import a story, or use one of the bundled ones. "
    "2. **Play**: choose the story and its cast (or bring a SillyTavern character card "
    "alone), then **Start scene**. 3. **Next** lets the model speak; type a line to speak "
    "yourself. The **Memory** column shows what each line was grounded on.")

log = logging.getLogger(__name__)


def build_app(services: Services) -> gr.Blocks:
    with gr.Blocks(title="Bookmarks — role-play with story characters") as demo:
        gr.Markdown("## Bookmarks — role-play with story characters")
        with gr.Row(visible=False, elem_id="start-here", equal_height=True) as start_here:
            gr.Markdown(START_HERE, elem_id="start-here-text")
            dismiss = gr.Button("Got it", size="sm", scale=0, min_width=90,
                                elem_id="start-here-dismiss")
        seen = gr.BrowserState(False, storage_key="bookmarks-start-here-seen")
        with gr.Tabs():
            library = build_library_tab(services)
            build_play_tab(services)
            build_annotate_tab(services)
            build_evaluate_tab(services)
            build_settings_tab(services)
        # the Library is the first tab: refresh it on every page load (other tabs refresh
        # when they are selected)
        demo.load(library["refresh"], None, [library["stories"], library["story"]])
        # a first visit says where to start, until dismissed (remembered by the browser)
        demo.load(lambda was_seen: gr.update(visible=not was_seen), [seen], [start_here])
        dismiss.click(lambda: (gr.update(visible=False), True), None, [start_here, seen])
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
    demo = build_app(services)
    demo.queue(default_concurrency_limit=4)
    auth = None
    if os.environ.get("BOOKMARKS_USERNAME") and os.environ.get("BOOKMARKS_PASSWORD"):
        auth = (os.environ["BOOKMARKS_USERNAME"], os.environ["BOOKMARKS_PASSWORD"])
    print(f"Bookmarks is running on http://{host}:{port}  (data: {services.settings.db_path})",
          flush=True)
    demo.launch(server_name=host, server_port=port, share=share, auth=auth,
                max_file_size=services.settings.max_upload_bytes, show_error=False,
                allowed_paths=[str(services.settings.data_dir / "exports")],
                theme=gr.themes.Soft(), css=CSS)
