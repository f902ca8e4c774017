"""Library tab: import stories (upload or bundled), browse cast and storyline."""

from __future__ import annotations

import re
from pathlib import Path

import gradio as gr

from bookmarks.engine.attribution import Suggestion
from bookmarks.engine.attribution import apply as apply_suggestions
from bookmarks.engine.attribution import suggest as suggest_speakers
from bookmarks.errors import BookmarksError
from bookmarks.scenes.prepare import progress
from bookmarks.services import Services
from bookmarks.stories.importers import FORMATS, sidecars
from bookmarks.stories.source_view import render as render_source
from bookmarks.stories.story_export import STORY_FORMATS, export_story, file_stem
from bookmarks.stories.upload_set import gather

from .library_prepare import build_prepare_box, wire_prepare
from .render import esc, parse_id, story_label, user_errors

PAGE = 50
EVERY, QUOTED = "every line", "narration holding a quote"
NO_SOURCE = ("No file text for this story. A JSONL or JSON file is its own storyline (a JSONL "
             "export's .source.txt, uploaded with it, brings the original file back); a story "
             "imported before the app kept files shows its lines once imported again.")
CHECK = "lines to check"  # speakers the import was less sure of (Action.check)
_QUOTE = re.compile(r"[“”\"]|(?:^|\s)[‘'][A-Z]")  # a double quote, or a single one opening
LONG_READ = 1_000_000  # bytes: an upload this big says it is being read before its preview


def check_view(reason: str) -> str:
    """The view of the lines to check for one reason (`lines to check: a pronoun tag`)."""
    return f"{CHECK}: {reason}"


def storyline_view(actions: list, view: str) -> list:
    """The storyline lines a view shows: every line, the narration that holds a quotation
    (speech the rules may have left unattributed), the lines whose speaker the import's
    rules were less sure of (`Action.check`: no tag named the speaker), those of one reason,
    or one character's lines."""
    if view == QUOTED:
        return [a for a in actions if a.character == "narration" and _QUOTE.search(a.text)]
    if view == CHECK:
        return [a for a in actions if a.check]
    if view.startswith(check_view("")):
        return [a for a in actions if a.check and check_view(a.check) == view]
    return actions if view in ("", EVERY) else [a for a in actions if a.character == view]


def present_at(ranges: dict[str, list[tuple[int, int]]], indices: list[int]) -> dict[int, list[str]]:
    """Who is present at each of these actions, by name (the store's presence runs)."""
    return {i: [name for name, runs in sorted(ranges.items()) if any(a <= i <= b for a, b in runs)]
            for i in indices}


def story_choices(services: Services) -> list[str]:
    return [story_label(s) for s in services.store.list_stories()]


def stories_table(services: Services) -> list[list]:
    return [[s.id, s.title, s.n_actions, len(services.store.characters(s.id)),
             prepared_text(services, s.id), (s.last_used_at or s.created_at)[:16].replace("T", " ")]
            for s in services.store.list_stories()]


def prepared_text(services: Services, story_id: int) -> str:
    """How far the story's memory is prepared ("" when never)."""
    rec = progress(services.store, story_id)
    if not rec.get("done"):
        return ""
    status = "done" if rec["done"] >= rec.get("steps", 0) else f"{rec['done']}/{rec['steps']} steps"
    return f"to action {rec['last_point']} (every {rec['every']}; {status})"


def export_story_files(services: Services, story_id: int, fmt: str) -> list[str]:
    """The story written for download: the storyline (JSONL with presence, or Fountain)
    and, next to it, the `.meta.json` (and `.questions.jsonl`, `.source.txt`) that
    importing reads."""
    story = services.store.stored_story(story_id)
    folder = services.settings.data_dir / "exports" / f"story-{story_id}-{fmt}"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in export_story(story, fmt, file_stem(story.title)).items():
        (folder / name).write_text(text, encoding="utf-8")
        paths.append(str(folder / name))
    return paths


def build_library_tab(services: Services) -> dict:
    with gr.Tab("Library"):
        with gr.Row():
            with gr.Column(scale=1):
                gr.Markdown("### Import a story")
                upload = gr.File(label="Story file (JSONL, play script, prose, Gutenberg play "
                                       "or novel, Fountain, reference JSON), or an export's "
                                       "files all at once",
                                 elem_id="story-upload", file_count="multiple",
                                 file_types=[".jsonl", ".json", ".txt", ".md", ".fountain"],
                                 type="filepath")
                fmt = gr.Dropdown(["auto", *FORMATS], value="auto", label="Format")
                title = gr.Textbox(label="Title (optional)", elem_id="import-title")
                preview = gr.Markdown(elem_id="library-preview")
                with gr.Accordion("Quotes the rules left as narration", open=False):
                    attr_btn = gr.Button("Suggest their speakers with the memory model",
                                         elem_id="attr-btn")
                    min_conf = gr.Slider(0, 1, value=0.7, step=0.05,
                                         label="On import, apply suggestions at or above")
                    attr_view = gr.Markdown(elem_id="attr-view")
                suggestions = gr.State(None)
                import_btn = gr.Button("Import", variant="primary", elem_id="import-btn")
                bundled_btn = gr.Button("Import bundled stories")
                status = gr.Markdown(elem_id="library-status")
            with gr.Column(scale=2):
                stories = gr.Dataframe(stories_table(services), label="Imported stories",
                                       headers=["id", "title", "actions", "characters",
                                                "memory prepared", "last used"],
                                       interactive=False, elem_id="library-stories",
                                       wrap=True,  # a long title wraps, hiding no column
                                       column_widths=["6%", "34%", "10%", "11%", "22%",
                                                      "17%"])
                story = gr.Dropdown(story_choices(services), label="Story", interactive=True,
                                    elem_id="library-story", value=None)
                summary = gr.Markdown(elem_id="library-summary")
                cast = gr.Dataframe(headers=["character", "aliases", "major", "actions"],
                                    label="Cast", interactive=False, wrap=True)
                with gr.Row():
                    page = gr.Number(value=1, precision=0, minimum=1, label="Storyline page")
                    prev_btn = gr.Button("◀ Previous")
                    next_btn = gr.Button("Next ▶")
                    view = gr.Dropdown([EVERY], value=EVERY, label="Show", elem_id="storyline-view",
                                       scale=2, min_width=240)  # `lines to check: turn-taking`
                storyline = gr.Dataframe(headers=["#", "chapter", "character", "text", "present"],
                                         label="Storyline (actions numbered from 1 in file "
                                               "order; headings are not actions; present: who "
                                               "the app believes could see or hear the line)",
                                         interactive=False, wrap=True,
                                         column_widths=["6%", "15%", "13%", "48%", "18%"],
                                         elem_id="library-storyline")
                with gr.Accordion("Who is present (for witnessed knowledge)", open=False,
                                  elem_id="presence-box"):
                    gr.Markdown("Derived from the storyline: entrances and exits in stage "
                                "directions, speakers, characters addressed by name; a new "
                                "scene or chapter starts empty. In a novel, which seldom says "
                                "who leaves, also a section break or a jump in time (`The next "
                                "morning`) starts a new scene, and someone who has neither "
                                "spoken, acted nor been called for ten lines is taken to have "
                                "gone (a first-person narrator stays): a rough guess, worth "
                                "checking where it matters. "
                                "The storyline's *present* column shows it line by line. "
                                "Correct it over a range.")
                    presence = gr.Dataframe(headers=["character", "actions present", "ranges"],
                                            interactive=False, wrap=True,
                                            elem_id="presence-table")
                    with gr.Row():
                        p_who = gr.Dropdown([], label="Character", value=None, elem_id="presence-who")
                        p_first = gr.Number(1, precision=0, minimum=1, label="From action",
                                            elem_id="presence-first")
                        p_last = gr.Number(1, precision=0, minimum=1, label="To action",
                                           elem_id="presence-last")
                        p_here = gr.Radio(["present", "absent"], value="present", label="Mark")
                        p_btn = gr.Button("Apply", elem_id="presence-apply")
                with gr.Accordion("Correct a line: its speaker or its text", open=False,
                                  elem_id="line-box"):
                    gr.Markdown("Click a line of the storyline (or type its number), then "
                                "give it to a character, to a new name (who joins the cast) "
                                "or to narration, and change its text if you like. Memory "
                                "that read the line is dropped; it is read again when needed. "
                                "Show → *lines to check* lists the lines whose speaker the "
                                "import was less sure of; Apply with the same speaker "
                                "confirms one. *In the file* shows the line where it stands "
                                "in the file you imported (▶), with its tag and the lines "
                                "around it.")
                    with gr.Row():
                        c_line = gr.Number(None, precision=0, minimum=1, label="Action #",
                                           elem_id="line-index")
                        c_who = gr.Dropdown([], label="Speaker", value=None,
                                            allow_custom_value=True, elem_id="line-speaker")
                    c_text = gr.Textbox(label="Text", lines=3, elem_id="line-text")
                    c_source = gr.Textbox(label="In the file", lines=8, max_lines=24,
                                          interactive=False, elem_id="line-source",
                                          placeholder=NO_SOURCE)
                    c_btn = gr.Button("Apply", elem_id="line-apply")
                    c_status = gr.Markdown(elem_id="line-status")
                prep = build_prepare_box()
                with gr.Accordion("Export the story", open=False, elem_id="story-export-box"):
                    gr.Markdown("JSONL keeps everything: every action, speaker, line break, "
                                "chapter, the cast with aliases, the author, who is present "
                                "(your corrections too) and the lines to check. Fountain keeps "
                                "all but presence, which is derived again on import, and the "
                                "lines to check. Keep the `.meta.json` (and "
                                "`.questions.jsonl`, and the `.source.txt` a JSONL export "
                                "carries: the file the story was read from, for *In the "
                                "file*) with the story file: upload them all at once here, "
                                "or keep them next to it for `bookmarks import FILE`.")
                    with gr.Row():
                        export_fmt = gr.Dropdown(list(STORY_FORMATS), value="jsonl",
                                                 label="Format", elem_id="story-export-format")
                        export_btn = gr.Button("Export", elem_id="story-export-btn")
                    export_files = gr.File(label="Download", file_count="multiple",
                                           interactive=False, elem_id="story-export-files")
                with gr.Accordion("Read the file again (current import rules)", open=False,
                                  elem_id="again-box"):
                    gr.Markdown("The app keeps the text of the file a story was read from. When "
                                "its import rules have improved (speakers, chapters, pictures "
                                "and notes), read it again: the result is a new story. This one, "
                                "its scenes and your corrections stay as they are; corrections "
                                "are not carried over.")
                    again_btn = gr.Button("Read the file again", elem_id="again-btn")
                    again_status = gr.Markdown(elem_id="again-status")
                with gr.Accordion("Merge characters or delete the story", open=False):
                    with gr.Row():
                        keep = gr.Dropdown([], label="Keep", value=None)
                        merge = gr.Dropdown([], label="Merge into it (becomes an alias)", value=None)
                        merge_btn = gr.Button("Merge")
                    with gr.Row():
                        confirm = gr.Checkbox(label="Yes, delete this story and its scenes")
                        delete_btn = gr.Button("Delete story", variant="stop")

    def story_file(value) -> str | None:
        """The story file of an upload (one file, or a story with its sidecars, which are
        put beside it: `upload_set.gather`); a `StoryFormatError` for a set that is not."""
        paths = [value] if isinstance(value, str) else list(value or [])
        if not paths:
            return None
        return str(gather(paths, services.settings.data_dir / "uploads"))

    def do_import(value, fmt_: str, title_: str, found=None, threshold: float = 0.7):
        """A refused file is said once, in the status line, naming file, line and reason
        (not as a second pop-up next to the preview's, nor as an error on the dropdown).
        Speaker suggestions made for this very file are applied at or above `threshold`."""
        if not value:
            return "Choose a file to upload first.", gr.update()
        try:
            path = story_file(value)
            fmt = None if fmt_ == "auto" else fmt_
            if found and found.get("path") == path:
                story = services.reader.load(path, fmt=fmt, title=title_.strip() or None,
                                             max_bytes=services.settings.max_upload_bytes)
                story = apply_suggestions(story, [Suggestion(**x) for x in found["items"]],
                                          float(threshold))
                story_id = services.store.add_story(story)
            else:
                story_id = services.import_file(path, fmt=fmt, title=title_.strip() or None)
        except (BookmarksError, ValueError) as exc:
            return f"**Not imported.** {esc(str(exc))}", gr.update()
        info = services.store.story(story_id)
        msg = f"Imported **{esc(info.title)}** ({info.n_actions} actions, from {Path(path).name})."
        return msg, gr.update(choices=story_choices(services), value=story_label(info))

    def do_preview(value, fmt_: str):
        """The upload's preview; a file over a megabyte first says it is being read (a novel
        of 15,000 actions takes about 20 s on a small machine)."""
        try:
            path = story_file(value)
        except BookmarksError as exc:
            yield f"**These files cannot be imported as they are.** {esc(str(exc))}"
            return
        size = Path(path).stat().st_size if path and Path(path).is_file() else 0
        if size > LONG_READ:
            yield (f"Reading **{esc(Path(path).name)}** ({size / 2**20:.1f} MB): finding who speaks "
                   "each line and the cast. A whole novel takes a while; the preview follows here.")
        yield preview_of(path, fmt_)

    def preview_of(path: str | None, fmt_: str) -> str:
        if not path:
            return ""
        try:
            story = services.reader.load(path, fmt=None if fmt_ == "auto" else fmt_,
                                         max_bytes=services.settings.max_upload_bytes)
        except (BookmarksError, ValueError) as exc:
            return f"**This file cannot be imported as it is.** {esc(str(exc))}"
        beside = [p.name for p in sidecars(Path(path)) if p.is_file()]
        read = f" Read with {esc(', '.join(beside))}." if beside else ""
        if story.source_format == "jsonl" and not sidecars(Path(path))[0].is_file():
            read += (" No .meta.json came with it: the title is the file's name and the cast "
                     "has no aliases. If this is an export, upload its files together.")
        counts = story.action_counts()
        cast = ", ".join(f"{esc(c.name)} ({counts.get(c.name, 0)})" for c in story.characters[:12])
        first = "  \n".join(f"[{a.index}] **{esc(a.character)}**: {esc(a.text[:160])}"
                            for a in story.actions[:8])
        return (f"**{esc(story.title)}** — format *{story.source_format}*, {len(story.actions)} "
                f"actions, {len(story.chapters())} chapters.{read}  \nCast: {cast}  \n\n{first}")

    @user_errors
    def do_merge(label: str | None, keep_: str | None, merge_: str | None):
        if not (label and keep_ and merge_) or keep_ == merge_:
            raise gr.Error("Choose two different characters.")
        services.store.merge_characters(parse_id(label), keep_, merge_)
        return (f"Merged {esc(merge_)} into {esc(keep_)}.", *show(label, 1))

    @user_errors
    def load_line(label: str | None, index: float | None):
        """The speaker and text of the line numbered `index`, and where it stands in the
        file the story was read from (nothing when there is no such line)."""
        if not label or not index:
            return gr.update(), gr.update(), ""
        story_id = parse_id(label)
        found = services.store.actions(story_id, int(index), int(index))
        if not found:
            return gr.update(), gr.update(), ""
        return (gr.update(value=found[0].character), found[0].text,
                render_source(services.store.source_around(story_id, int(index))))

    def pick_line(evt: gr.SelectData):
        """A click on a storyline row: its number (the first column) to correct."""
        row = evt.row_value or []
        return row[0] if row else gr.update()

    @user_errors
    def do_correct(label: str | None, index: float | None, who: str | None, text: str,
                   page_: float, view_: str = EVERY):
        if not label or not index:
            raise gr.Error("Choose a story and the number of the line to correct.")
        story_id = parse_id(label)
        old = services.store.actions(story_id, int(index), int(index))
        name = services.store.correct_line(story_id, int(index), who or "",
                                           None if old and old[0].text == text else text)
        msg = f"Line {int(index)} is now {esc(name)}’s." if name != "narration" else \
            f"Line {int(index)} is now narration."
        if old and old[0].character == name != "narration" and old[0].text == text:
            msg = f"Line {int(index)} is {esc(name)}’s: confirmed."
        return (msg, *show(label, page_, view_))

    @user_errors
    def do_export(label: str | None, fmt_: str):
        if not label:
            raise gr.Error("Choose a story first.")
        return export_story_files(services, parse_id(label), fmt_ or "jsonl")

    @user_errors
    def do_again(label: str | None):
        if not label:
            raise gr.Error("Choose a story first.")
        new_id, said = services.import_again(parse_id(label))
        return said, gr.update(choices=story_choices(services))

    @user_errors
    def do_delete(label: str | None, sure: bool):
        if not label:
            raise gr.Error("Choose a story first.")
        if not sure:
            raise gr.Error("Tick the box to confirm the deletion.")
        # with its evaluation and arena runs; its scenes' background work stops (the store
        # tells the prefetcher, as it does of presence corrections and merges)
        gone = services.store.delete_story(parse_id(label))
        runs = (f" with its {gone['runs']} evaluation run(s) and {gone['arena_items']} arena "
                "item(s)" if any(gone.values()) else "")
        return (f"Story deleted{runs}.", gr.update(choices=story_choices(services), value=None),
                False)

    @user_errors
    def do_bundled():
        ids = services.ensure_bundled()
        msg = f"Imported {len(ids)} bundled stories." if ids else "Bundled stories are already imported."
        return msg, gr.update(choices=story_choices(services))

    @user_errors
    def show(label: str | None, page_: float, view_: str = EVERY):
        if not label:
            return "", [], [], 1, gr.update(choices=[]), gr.update(choices=[]), [], \
                gr.update(choices=[]), gr.update(choices=[]), gr.update(choices=[EVERY], value=EVERY)
        story_id = parse_id(label)
        info = services.store.story(story_id)
        counts = services.store.action_counts(story_id)
        rows = [[c.name, ", ".join(c.aliases), "yes" if c.major else "", counts.get(c.name, 0)]
                for c in services.store.characters(story_id)]
        names = [r[0] for r in rows]
        reasons = services.store.check_reasons(story_id)
        by_reason = [check_view(r) for r in reasons] if len(reasons) > 1 else []
        views = [EVERY, QUOTED, CHECK, *by_reason, *names, "narration"]
        view_ = view_ if view_ in views else EVERY
        if view_ == EVERY:
            total = info.n_actions
            pages = max(1, -(-total // PAGE))
            p = min(max(1, int(page_ or 1)), pages)
            actions = services.store.actions(story_id, (p - 1) * PAGE + 1, p * PAGE)
            shown_ = ""
        else:
            chosen = storyline_view(services.store.actions(story_id), view_)
            pages = max(1, -(-len(chosen) // PAGE))
            p = min(max(1, int(page_ or 1)), pages)
            actions = chosen[(p - 1) * PAGE:p * PAGE]
            shown_ = f" Showing {len(chosen)} line{'' if len(chosen) == 1 else 's'}: {esc(view_)}."
        here = present_at(services.store.presence(story_id), [a.index for a in actions])
        lines = [[a.index, a.chapter or "", a.character,
                  f"[check: {a.check}] {a.text}" if view_ == CHECK else a.text,
                  ", ".join(here[a.index])] for a in actions]
        chapters = services.store.chapters(story_id)
        doubtful = sum(reasons.values())
        why = ", ".join(f"{esc(r)} {n}" for r, n in reasons.items())
        check = (f" {doubtful} line{'' if doubtful == 1 else 's'} to check ({why}): the import's "
                 "rules found their speaker without a tag naming them (Show → lines to check, "
                 "all or by reason)."
                 if doubtful else "")
        text = (f"**{esc(info.title)}** — {info.n_actions} actions, {len(rows)} characters, "
                f"{len(chapters)} chapters, {info.source_format} format.{check} "
                f"Page {p} of {pages}.{shown_} {esc(info.description)}")
        return (text, rows, lines, p, gr.update(choices=names), gr.update(choices=names),
                presence_rows(story_id), gr.update(choices=names),
                gr.update(choices=[*names, "narration"]), gr.update(choices=views, value=view_))

    async def do_suggest(value, fmt_: str):
        if not value:
            raise gr.Error("Choose a file to upload first.")
        try:
            path = story_file(value)
            story = services.reader.load(path, fmt=None if fmt_ == "auto" else fmt_,
                                         max_bytes=services.settings.max_upload_bytes)
            found = await suggest_speakers(services.llms["memory"], story)
        except BookmarksError as exc:
            raise gr.Error(str(exc)) from None
        if not found:
            return "No quote was left as narration: nothing to suggest.", None
        rows = "\n".join(f"| {s.index} | {esc(s.text[:100])} | {esc(s.speaker)} | "
                         f"{s.confidence:.2f} |" for s in found)
        table = ("| # | paragraph | speaker | confidence |\n|---|---|---|---|\n" + rows)
        return table, {"path": path, "items": [s.__dict__ for s in found]}

    def presence_rows(story_id: int) -> list[list]:
        ranges = services.store.presence(story_id)
        return [[name, sum(b - a + 1 for a, b in runs),
                 ", ".join(f"{a}–{b}" if a != b else str(a) for a, b in runs)]
                for name, runs in sorted(ranges.items())]

    @user_errors
    def do_presence(label: str | None, who: str | None, first: float, last: float, mark: str,
                    page_: float, view_: str = EVERY):
        if not label or not who:
            raise gr.Error("Choose a story and a character.")
        a, b = int(first or 1), int(last or 1)
        story_id = parse_id(label)
        if not 1 <= a <= b <= services.store.story(story_id).n_actions:
            raise gr.Error("The range must lie within the story, first ≤ last.")
        services.store.mark_presence(story_id, who, a, b, mark == "present")
        return show(label, page_, view_)  # the table and the storyline's present column

    shown = [summary, cast, storyline, page, keep, merge, presence, p_who, c_who, view]
    upload.change(do_preview, [upload, fmt], [preview])
    upload.change(lambda: "", None, [status])  # "Choose a file first" is answered: clear it
    fmt.change(do_preview, [upload, fmt], [preview])
    refresh = {"fn": lambda: stories_table(services), "inputs": None, "outputs": stories}
    import_btn.click(do_import, [upload, fmt, title, suggestions, min_conf],
                     [status, story]).then(**refresh)
    attr_btn.click(do_suggest, [upload, fmt], [attr_view, suggestions])
    bundled_btn.click(do_bundled, None, [status, story]).then(**refresh)
    story.change(lambda s: show(s, 1), [story], shown)
    page.submit(show, [story, page, view], shown)
    prev_btn.click(lambda s, p, v: show(s, (p or 1) - 1, v), [story, page, view], shown)
    next_btn.click(lambda s, p, v: show(s, (p or 1) + 1, v), [story, page, view], shown)
    view.input(lambda s, v: show(s, 1, v), [story, view], shown)
    merge_btn.click(do_merge, [story, keep, merge], [status, *shown])
    delete_btn.click(do_delete, [story, confirm], [status, story, confirm]).then(**refresh)
    wire_prepare(services, prep, story, refresh)
    p_btn.click(do_presence, [story, p_who, p_first, p_last, p_here, page, view], shown)
    storyline.select(pick_line, None, [c_line])
    c_line.change(load_line, [story, c_line], [c_who, c_text, c_source])
    c_btn.click(do_correct, [story, c_line, c_who, c_text, page, view], [c_status, *shown])
    export_btn.click(do_export, [story, export_fmt], [export_files])
    again_btn.click(do_again, [story], [again_status, story]).then(**refresh)
    return {"story": story, "stories": stories,
            # a page opened later (a reload, another tab) shows what was imported since
            "refresh": lambda: (stories_table(services),
                                gr.update(choices=story_choices(services)))}
