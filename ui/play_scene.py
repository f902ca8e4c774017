"""Play tab, scene column: the open scene — its lines, the character the writer plays in
it, Next / Auto-continue / Send, regenerate, undo, fork, edit, export — and how it is
shown (`ScenePage.view`). Only the open scene changes here; the New-scene form is never
read or written (see play_form.py). Errors are said once, in the scene's status line."""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass

import gradio as gr

from bookmarks.engine.cards import world_info_for
from bookmarks.engine.methods import METHODS
from bookmarks.engine.progress import BOARD
from bookmarks.errors import BookmarksError
from bookmarks.scenes import panel
from bookmarks.scenes.play import (
    add_user_turn,
    choose_speaker,
    fork_at,
    generate_turn,
    regenerate_last,
    round_robin,
    undo_last,
)
from bookmarks.scenes.scene_export import export_scene
from bookmarks.services import Services

from .panel import activity_html, cost_html
from .play_memory import MemoryColumn, bookmark_choices
from .render import esc, message_of, note, nothing, said, scene_label

log = logging.getLogger(__name__)

DIRECTOR = "Director (model plays all)"
SPINNER = '<span class="bm-spinner" aria-hidden="true"></span>'
EXPORT_SUFFIX = {"markdown": ".md", "fountain": ".fountain", "jsonl": ".jsonl",
                 "worldinfo": ".worldinfo.json"}


def scene_choices(services: Services) -> list[str]:
    """Scenes a writer made (arena continuations live in Evaluate → Arena)."""
    return [scene_label(s) for s in services.store.list_scenes()
            if not s.settings.get("arena")]


@dataclass
class SceneColumn:
    title: gr.Markdown
    you: gr.Dropdown
    chat: gr.Chatbot
    status: gr.Markdown
    next_btn: gr.Button
    auto_n: gr.Number
    auto_btn: gr.Button
    line: gr.Textbox
    say_btn: gr.Button
    turn_pick: gr.Dropdown
    regen_btn: gr.Button
    undo_btn: gr.Button
    fork_btn: gr.Button
    export_fmt: gr.Dropdown
    export_btn: gr.Button
    export_file: gr.File
    edit_text: gr.Textbox
    edit_btn: gr.Button


def build_scene_column() -> SceneColumn:
    title = gr.Markdown("", elem_id="scene-title")  # the chat's placeholder says what to do
    chat = gr.Chatbot(label="Scene", show_label=False, height=400, elem_id="scene-chat",
                      placeholder="**No scene open.** Start one with the New-scene form "
                                  "(below, on a phone), or resume one above.")
    status = gr.Markdown(elem_id="play-status")
    with gr.Row():
        next_btn = gr.Button("Next", variant="primary", elem_id="next-turn", min_width=80)
        auto_n = gr.Number(value=3, precision=0, minimum=1, maximum=20, label="Turns",
                           min_width=70, scale=0)
        auto_btn = gr.Button("Auto-continue", elem_id="auto-continue", min_width=110)
    with gr.Row():
        you = gr.Dropdown([DIRECTOR], value=DIRECTOR, label="You play here",
                          elem_id="scene-you", min_width=240, scale=2)
        line = gr.Textbox(label="Your line", scale=3, elem_id="user-line", min_width=200)
        say_btn = gr.Button("Send", scale=0, elem_id="send-line", min_width=70)
    with gr.Row():
        turn_pick = gr.Dropdown([], label="Turn", scale=2, elem_id="turn-pick", value=None,
                                min_width=150)
        regen_btn = gr.Button("Regenerate last", elem_id="regenerate", min_width=120)
        undo_btn = gr.Button("Undo last", elem_id="undo-last", min_width=90)
        fork_btn = gr.Button("Fork here", elem_id="fork-here", min_width=90)
    with gr.Row():
        export_fmt = gr.Dropdown(list(EXPORT_SUFFIX), value="markdown",
                                 label="Export the scene as", elem_id="export-format",
                                 min_width=150)
        export_btn = gr.Button("Export", elem_id="export-scene", min_width=80)
        export_file = gr.File(label="Download", interactive=False, elem_id="export-file",
                              min_width=160, visible=False)
    with gr.Accordion("Edit the selected line", open=False):
        edit_text = gr.Textbox(label="New text (the selected line)", lines=2,
                               elem_id="edit-text")
        edit_btn = gr.Button("Save edit")
    return SceneColumn(title, you, chat, status, next_btn, auto_n, auto_btn, line, say_btn,
                       turn_pick, regen_btn, undo_btn, fork_btn, export_fmt, export_btn,
                       export_file, edit_text, edit_btn)


_OPENING = re.compile(r"^\W*([^:\n]{1,45}?)\W*:[*_\s]*")


def draft(text: str, who: str) -> str | None:
    """What of a reply still arriving to show: the line, without its speaker's own name.
    A try that opens as someone else's line ("Cecily Cardew: …", "1. Jack's next line:")
    is one the actor will set aside: nothing of it is shown (None)."""
    found = _OPENING.match(text)
    if not found:
        return text
    name = found.group(1).strip().casefold()
    if name and (name == who.casefold() or name in who.casefold().split()):
        return text[found.end():]
    return None


class ScenePage:
    """The open scene and the memory column, shown together: `view` is what every event
    that opens or changes a scene returns."""

    def __init__(self, services: Services, scene_id: gr.State, sc: SceneColumn,
                 mem: MemoryColumn, scenes: gr.Dropdown):
        self.services, self.store = services, services.store
        self.scene_id, self.sc, self.mem, self.scenes = scene_id, sc, mem, scenes
        self.outputs = [scene_id, sc.title, sc.you, sc.chat, sc.status, sc.turn_pick,
                        sc.edit_text, sc.line, sc.export_file, scenes, mem.activity, mem.cost,
                        mem.evidence, mem.bookmark, mem.f_knower]

    def view(self, sid: int, turn_id: int | None = None) -> dict:
        store, sc, mem = self.store, self.sc, self.mem
        scene = store.scene(sid)
        lines = panel.scene_storyline(store, scene)
        turns = [x for x in lines if x["turn_id"]]
        chosen = turn_id or next((x["turn_id"] for x in reversed(turns)), None)
        act = panel.turn_activity(store, chosen) if chosen else None
        label = next((f"{x['index']} · {x['character']}" for x in turns
                      if x["turn_id"] == chosen), "")
        chosen_text = next((x["text"] for x in turns if x["turn_id"] == chosen), "")
        played = scene.settings.get("you") or DIRECTOR
        if played != DIRECTOR and played not in scene.cast:
            played = DIRECTOR
        budget = (f", K={scene.settings.get('budget', 3)}"
                  if (scene.method or "").startswith("bookmarks") else "")
        setting = f"  \n*Setting:* {esc(scene.setting)}" if scene.setting else ""
        witnessed = scene.settings.get("knowledge") == "witnessed"
        if witnessed:
            setting += "  \n*Knowledge:* witnessed — each character knows only what they saw"
        return {
            self.scene_id: sid,
            sc.title: f"### {esc(scene.title)}\n{esc(METHODS.get(scene.method, scene.method))}"
                      f"{budget}; you play: {esc(played)}{setting}",
            sc.you: gr.update(choices=[DIRECTOR, *scene.cast], value=played),
            sc.chat: messages(lines),
            sc.status: "",
            sc.turn_pick: gr.update(choices=[(f"{x['index']} · {x['character']}", x["turn_id"])
                                             for x in turns], value=chosen),
            sc.edit_text: gr.update(value=chosen_text),
            sc.line: gr.update(label="Your line (as narration: you direct)"
                               if played == DIRECTOR else f"Your line (as {played})"),
            # a file exported before (from this scene or another) is out of date
            sc.export_file: gr.update(value=None, visible=False),
            self.scenes: gr.update(choices=scene_choices(self.services),
                                   value=scene_label(scene)),
            mem.activity: activity_html(act, label),
            mem.cost: cost_html(panel.cost_meter(store, sid, chosen)),
            mem.evidence: gr.update(choices=act["evidence"] if act else [], value=None),
            mem.bookmark: gr.update(choices=bookmark_choices(store, scene), value=None),
            mem.f_knower: gr.update(choices=["", *scene.cast] if witnessed else [""], value=""),
        }

    def say(self, message: str, sid: int | None = None) -> dict:
        """An error said once in the status line; the scene shown as it is now."""
        shown = self.view(sid) if sid is not None else {}
        return {**shown, self.sc.status: note(message)}

    # -- background memory ----------------------------------------------------------
    def prepare_next(self, sid) -> None:
        """Ground the next speaker's memory in the background (round-robin order only: a
        speaker the model chooses is not known before Next)."""
        if sid is None or not self.services.settings.background_sync:
            return
        try:
            scene = self.store.scene(sid)
            if scene.settings.get("order") == "model chooses":
                return
            self.services.prefetcher.schedule(sid, round_robin(self.store, scene,
                                                               user_character(scene)))
        except BookmarksError as exc:  # a scene without a speaker yet, a deleted scene
            log.info("no background synchronization for scene %s: %s", sid, exc)

    def waiting_text(self, sid, who: str, k: int, n: int) -> str:
        settings = self.services.settings
        status = self.services.prefetcher.status(sid) if settings.background_sync else {}
        work = "".join(f"<br>synchronizing {esc(x)}" for x in BOARD.lines(sid))
        if status.get("state") == "preparing" and status.get("character") == who:
            return (f"*thinking… (turn {k + 1} of {n}: memory being prepared in the "
                    f"background, {status['seconds']:.0f} s so far)*{work}")
        return f"*thinking… (turn {k + 1} of {n}: memory)*{work}"

    def streaming(self, sid, who: str, text: str, k: int, n: int) -> str:
        shown = draft(text, who) if text else None
        if shown:
            return esc(shown)
        if text:  # a try the actor will set aside: say so, show none of it
            return "*writing a line…*"
        return self.waiting_text(sid, who, k, n)


def user_character(scene) -> str | None:
    you_play = scene.settings.get("you")
    return None if you_play in (None, DIRECTOR) or you_play not in scene.cast else you_play


def messages(lines: list[dict]) -> list[dict]:
    out = []
    for x in lines:
        who = esc(x["character"])
        body = (f"*{esc(x['text'])}*" if x["character"] == "narration"
                else f"**{who}:** {esc(x['text'])}")
        if x.get("edited"):
            body += " <small>(edited)</small>"
        if x["source"] == "story":
            out.append({"role": "assistant",
                        "content": f"<small>story</small> [{x['index']}] {body}"})
        else:
            out.append({"role": "user" if x["source"] == "user" else "assistant",
                        "content": f"[{x['index']}] {body}"})
    return out


def wire_scene(services: Services, page: ScenePage) -> None:
    store, sc = services.store, page.sc
    outputs = page.outputs
    # the progress animation on the scene only: a turn also refreshes the line box, the
    # turn picker and the panel, which otherwise each spun with a queue timer
    model_events = {"concurrency_id": "models", "concurrency_limit": 2, "show_progress_on": [sc.chat]}
    no_scene = "Start or resume a scene first."

    @said(sc.status)
    def resume(label):
        if not label:
            return nothing([sc.title])
        sid = int(str(label).split(":", 1)[0])
        page.prepare_next(sid)
        return page.view(sid)

    @said(sc.status)
    def set_you(sid, who):
        if sid is None:
            return {sc.you: gr.update(value=DIRECTOR), sc.status: note(no_scene)}
        scene = store.scene(sid)
        store.update_scene_settings(sid, {**scene.settings,
                                          "you": None if who in (None, DIRECTOR) else who})
        page.prepare_next(sid)
        return page.view(sid)

    async def speaker_for(scene) -> str:
        if scene.settings.get("order") == "model chooses":
            return await choose_speaker(store, services.llms["memory"], scene,
                                        user_character(scene))
        return round_robin(store, scene, user_character(scene))

    async def streamed(task, sid, who, latest, k, n, *, replacing=False):
        """Show a model line while it arrives (`latest` holds the text so far), then the
        committed scene, or the problem in words. A regenerated line replaces the last one
        until the new one is committed."""
        base, shown = page.view(sid), None
        label = f"**{esc(who)}** (regenerating):" if replacing else f"**{esc(who)}:**"
        before = base[sc.chat][:-1] if replacing else base[sc.chat]
        while not task.done():
            body = page.streaming(sid, who, latest["text"], k, n)
            if body != shown:
                shown = body
                yield {**base, sc.chat: before + [
                    {"role": "assistant", "content": f"{SPINNER}{label} {body}"}]}
            await asyncio.sleep(0.2)
        try:
            task.result()
        except (BookmarksError, ValueError) as exc:
            yield page.say(message_of(exc), sid)
            return
        page.prepare_next(sid)
        yield page.view(sid)

    async def run_turns(sid, n):
        """Generate n turns; each streams in (the line while it arrives, then the cleaned
        line once the turn is committed)."""
        if sid is None:
            yield {sc.status: note(no_scene)}
            return
        n = max(1, min(20, int(n or 1)))
        for k in range(n):
            scene = store.scene(sid)
            latest = {"text": ""}

            def on_text(text: str, latest: dict = latest) -> None:
                latest["text"] = text

            try:
                who = await speaker_for(scene)
            except BookmarksError as exc:
                yield page.say(message_of(exc), sid)
                return

            async def one_turn(scene=scene, who=who, on_text=on_text):
                prepared = None
                if services.settings.background_sync:
                    pre = services.prefetcher
                    prepared = await pre.take(sid, pre.step_for(sid, who))
                return await generate_turn(
                    store, services.llms, sid, who, budget=scene.settings.get("budget", 3),
                    window=services.settings.scene_window,
                    state_block=services.settings.state_block, on_text=on_text,
                    prepared=prepared, max_read=services.settings.partial_after)

            task = asyncio.create_task(one_turn())
            async for update in streamed(task, sid, who, latest, k, n):
                yield update
            if task.exception() is not None:  # said by streamed; the later turns wait
                return

    async def next_one(sid):
        async for update in run_turns(sid, 1):
            yield update

    async def regenerate(sid):
        """A new sample for the last model line, streamed in like any turn (the old line
        stays until the new one is committed)."""
        if sid is None:
            yield {sc.status: note(no_scene)}
            return
        scene = store.scene(sid)
        turns = store.turns(sid)
        if not turns or turns[-1].source != "model":
            yield {sc.status: note("The last line is not the model's; there is nothing to "
                                   "regenerate.")}
            return
        who, latest = turns[-1].character, {"text": ""}

        def on_text(text: str) -> None:
            latest["text"] = text

        task = asyncio.create_task(regenerate_last(
            store, services.llms, sid, budget=scene.settings.get("budget", 3),
            window=services.settings.scene_window, state_block=services.settings.state_block,
            on_text=on_text))
        async for update in streamed(task, sid, who, latest, 0, 1, replacing=True):
            yield update

    @said(sc.status)
    def say(sid, text):
        if sid is None:
            return {sc.status: note(no_scene)}
        scene = store.scene(sid)
        who = user_character(scene)
        add_user_turn(store, sid, who or "narration", text or "")
        page.prepare_next(sid)
        return {**page.view(sid), sc.line: ""}

    @said(sc.status)
    def undo(sid):
        if sid is None:
            return {sc.status: note(no_scene)}
        gone = undo_last(store, sid)
        page.prepare_next(sid)
        shown = page.view(sid)
        return shown if gone else {**shown, sc.status: note("The scene has no turn to undo.")}

    @said(sc.status)
    def fork(sid, turn_id):
        if sid is None:
            return {sc.status: note(no_scene)}
        new = fork_at(store, sid, turn_id)
        page.prepare_next(new.id)
        return {**page.view(new.id),
                sc.status: note(f"Forked into scene {new.id}; memory now follows this branch.")}

    @said(sc.status)
    def edit(sid, turn_id, text):
        if sid is None or not turn_id:
            return {sc.status: note("Select a line to edit.")}
        if not (text or "").strip():
            return {sc.status: note("The new text is empty.")}
        store.edit_turn(turn_id, text.strip())
        page.prepare_next(sid)
        return page.view(sid, turn_id)

    @said(sc.status)
    def pick_turn(sid, turn_id):
        return page.view(sid, turn_id) if sid is not None and turn_id else nothing([sc.title])

    @said(sc.status)
    def do_export(sid, fmt):
        if sid is None:
            return {sc.status: note(no_scene)}
        scene = store.scene(sid)
        if fmt == "worldinfo":
            text = world_info_for(store, scene.story_id, scene_id=sid)
        else:
            text = export_scene(store, sid, fmt)
        folder = services.settings.data_dir / "exports"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"scene-{sid}{EXPORT_SUFFIX[fmt]}"
        path.write_text(text, encoding="utf-8")
        return {sc.export_file: gr.update(value=str(path), visible=True)}

    page.scenes.input(resume, [page.scenes], outputs)
    sc.you.input(set_you, [page.scene_id, sc.you], outputs)
    sc.next_btn.click(next_one, [page.scene_id], outputs, **model_events)
    sc.auto_btn.click(run_turns, [page.scene_id, sc.auto_n], outputs, **model_events)
    sc.say_btn.click(say, [page.scene_id, sc.line], outputs)
    sc.line.submit(say, [page.scene_id, sc.line], outputs)
    sc.regen_btn.click(regenerate, [page.scene_id], outputs, **model_events)
    sc.undo_btn.click(undo, [page.scene_id], outputs)
    sc.fork_btn.click(fork, [page.scene_id, sc.turn_pick], outputs)
    sc.edit_btn.click(edit, [page.scene_id, sc.turn_pick, sc.edit_text], outputs)
    sc.turn_pick.input(pick_turn, [page.scene_id, sc.turn_pick], outputs)
    sc.export_btn.click(do_export, [page.scene_id, sc.export_fmt], [sc.export_file, sc.status])
