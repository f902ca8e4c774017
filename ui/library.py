"""Library tab: import stories (upload or bundled), browse cast and storyline."""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from bookmarks.importers import FORMATS
from bookmarks.services import Services

from .render import esc, parse_id, story_label, user_errors

PAGE = 50


def story_choices(services: Services) -> list[str]:
    return [story_label(s) for s in services.store.list_stories()]


def build_library_tab(services: Services) -> dict:
    with gr.Tab("Library", id="library"):
        with gr.Row():
            with gr.Column(scale=1):
                gr.Markdown("### Import a story")
                upload = gr.File(label="Story file (JSONL, script, prose or reference JSON)",
                                 file_types=[".jsonl", ".json", ".txt", ".md"], type="filepath")
                fmt = gr.Dropdown(["auto", *FORMATS], value="auto", label="Format")
                title = gr.Textbox(label="Title (optional)")
                import_btn = gr.Button("Import", variant="primary")
                bundled_btn = gr.Button("Import bundled stories")
                status = gr.Markdown(elem_id="library-status")
            with gr.Column(scale=2):
                story = gr.Dropdown(story_choices(services), label="Stories", interactive=True,
                                    elem_id="library-story")
                summary = gr.Markdown()
                cast = gr.Dataframe(headers=["character", "aliases", "major", "actions"],
                                    label="Cast", interactive=False, wrap=True)
                with gr.Row():
                    page = gr.Number(value=1, precision=0, minimum=1, label="Storyline page")
                    prev_btn = gr.Button("◀ Previous")
                    next_btn = gr.Button("Next ▶")
                storyline = gr.Dataframe(headers=["#", "chapter", "character", "text"],
                                         label="Storyline", interactive=False, wrap=True)

    @user_errors
    def do_import(path: str | None, fmt_: str, title_: str):
        if not path:
            raise gr.Error("Choose a file to upload first.")
        story_id = services.import_file(path, fmt=None if fmt_ == "auto" else fmt_,
                                        title=title_.strip() or None)
        info = services.store.story(story_id)
        msg = f"Imported **{esc(info.title)}** ({info.n_actions} actions, from {Path(path).name})."
        return msg, gr.update(choices=story_choices(services), value=story_label(info))

    @user_errors
    def do_bundled():
        ids = services.ensure_bundled()
        msg = f"Imported {len(ids)} bundled stories." if ids else "Bundled stories are already imported."
        return msg, gr.update(choices=story_choices(services))

    @user_errors
    def show(label: str | None, page_: float):
        if not label:
            return "", [], [], 1
        story_id = parse_id(label)
        info = services.store.story(story_id)
        counts = services.store.action_counts(story_id)
        rows = [[c.name, ", ".join(c.aliases), "yes" if c.major else "", counts.get(c.name, 0)]
                for c in services.store.characters(story_id)]
        pages = max(1, -(-info.n_actions // PAGE))
        p = min(max(1, int(page_ or 1)), pages)
        actions = services.store.actions(story_id, (p - 1) * PAGE + 1, p * PAGE)
        lines = [[a.index, a.chapter or "", a.character, a.text] for a in actions]
        chapters = services.store.chapters(story_id)
        text = (f"**{esc(info.title)}** — {info.n_actions} actions, {len(rows)} characters, "
                f"{len(chapters)} chapters, {info.source_format} format. "
                f"Page {p} of {pages}. {esc(info.description)}")
        return text, rows, lines, p

    import_btn.click(do_import, [upload, fmt, title], [status, story])
    bundled_btn.click(do_bundled, None, [status, story])
    story.change(show, [story, gr.State(1)], [summary, cast, storyline, page])
    page.submit(show, [story, page], [summary, cast, storyline, page])
    prev_btn.click(lambda s, p: show(s, (p or 1) - 1), [story, page],
                   [summary, cast, storyline, page])
    next_btn.click(lambda s, p: show(s, (p or 1) + 1), [story, page],
                   [summary, cast, storyline, page])
    return {"story": story}
