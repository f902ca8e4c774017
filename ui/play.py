"""Play tab: start or resume a scene, play a character or direct, let the model speak,
and watch the memory side panel. Handlers are thin: all logic is in `bookmarks/`."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import gradio as gr

from bookmarks.engine.cards import attach, world_info_for
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
from bookmarks.stories.sillytavern_card import read_card
from bookmarks.stories.sillytavern_lorebook import read_world_info

from .library import story_choices
from .panel import activity_html, cost_html, passage_md, timeline_html
from .render import esc, parse_id, scene_label, user_errors

log = logging.getLogger(__name__)

DIRECTOR = "Director (the model plays everyone)"
METHOD_CHOICES = [(label, key) for key, label in METHODS.items()]


def scene_choices(services: Services) -> list[str]:
    """Scenes a writer made (arena continuations live in Evaluate → Arena)."""
    return [scene_label(s) for s in services.store.list_scenes()
            if not s.settings.get("arena")]


def build_play_tab(services: Services) -> dict:
    store = services.store
    with gr.Tab("Play") as tab:
        scene_id = gr.State(None)
        with gr.Row():
            with gr.Column(scale=1, min_width=260):
                gr.Markdown("### New scene")
                story = gr.Dropdown(story_choices(services), label="Story", elem_id="play-story", value=None)
                point = gr.Number(label="Start after story action", precision=0, minimum=0,
                                  elem_id="play-point")
                cast = gr.CheckboxGroup([], label="Cast (2 or more)", elem_id="play-cast")
                own = gr.Textbox(label="Add a character of your own (optional)")
                card_file = gr.File(label="…or a SillyTavern character card (.json, .png)",
                                    file_types=[".json", ".png"], type="filepath",
                                    elem_id="card-upload")
                lore_file = gr.File(label="SillyTavern World Info / lorebook (.json, optional)",
                                    file_types=[".json"], type="filepath",
                                    elem_id="lore-upload")
                setting = gr.Textbox(label="Setting (optional)", lines=2)
                method = gr.Dropdown(METHOD_CHOICES, value="bookmarks", label="Grounding method",
                                     elem_id="play-method")
                budget = gr.Slider(1, 8, value=services.settings.budget, step=1,
                                   label="Bookmark budget K")
                you = gr.Dropdown([DIRECTOR], value=DIRECTOR, label="You play",
                                  elem_id="play-you")
                order = gr.Radio(["round-robin", "model chooses"], value="round-robin",
                                 label="Next speaker")
                knowledge = gr.Radio(["omniscient", "witnessed"], value="omniscient",
                                     label="Knowledge: everything in the story, or only what "
                                           "each character witnessed", elem_id="play-knowledge")
                start_btn = gr.Button("Start scene", variant="primary", elem_id="start-scene")
                gr.Markdown("### Past scenes")
                scenes = gr.Dropdown(scene_choices(services), label="Resume a scene",
                                     elem_id="play-scenes", value=None)
            with gr.Column(scale=2):
                title = gr.Markdown("*Start a scene, or resume one.*", elem_id="scene-title")
                chat = gr.Chatbot(label="Scene", height=520, elem_id="scene-chat")
                with gr.Row():
                    next_btn = gr.Button("Next ▶", variant="primary", elem_id="next-turn")
                    auto_n = gr.Number(value=3, precision=0, minimum=1, maximum=20,
                                       label="Turns", min_width=80)
                    auto_btn = gr.Button("Auto-continue", elem_id="auto-continue")
                with gr.Row():
                    line = gr.Textbox(label="Your line", scale=4, elem_id="user-line")
                    say_btn = gr.Button("Send", scale=1, elem_id="send-line")
                with gr.Row():
                    turn_pick = gr.Dropdown([], label="Turn", scale=2, elem_id="turn-pick", value=None)
                    regen_btn = gr.Button("Regenerate last", scale=1, elem_id="regenerate")
                    undo_btn = gr.Button("Undo last", scale=1)
                    fork_btn = gr.Button("Fork here", scale=1, elem_id="fork-here")
                with gr.Row():
                    export_fmt = gr.Dropdown(["markdown", "fountain", "jsonl", "worldinfo"],
                                             value="markdown", label="Export the scene as",
                                             elem_id="export-format")
                    export_btn = gr.Button("Export", elem_id="export-scene")
                    export_file = gr.File(label="Download", interactive=False,
                                          elem_id="export-file")
                with gr.Accordion("Edit the selected line", open=False):
                    edit_text = gr.Textbox(label="New text (the selected line)", lines=2,
                                           elem_id="edit-text")
                    edit_btn = gr.Button("Save edit")
            with gr.Column(scale=2):
                gr.Markdown("### Memory")
                activity = gr.HTML(activity_html(None), elem_id="memory-panel")
                cost = gr.HTML("", elem_id="cost-meter")
                evidence = gr.Dropdown([], label="Show an evidence passage", elem_id="evidence", value=None)
                passage = gr.Markdown()
                with gr.Accordion("Bookmarks browser", open=False):
                    with gr.Row():
                        f_type = gr.Dropdown(["", "concept", "state", "behavioral", "profile"],
                                             value="", label="Type")
                        f_subject = gr.Textbox(label="Subject")
                        f_title = gr.Textbox(label="Title")
                        f_knower = gr.Dropdown([""], value="", label="Known to (witnessed)",
                                               elem_id="bookmark-knower")
                    bookmark = gr.Dropdown([], label="Bookmark", elem_id="bookmark-pick", value=None)
                    timeline = gr.HTML()
                    bm_text = gr.Textbox(label="Edit text", lines=3)
                    bm_pin = gr.Checkbox(label="Pin (syncs build on your text)")
                    bm_save = gr.Button("Save bookmark")

    view_outputs = [scene_id, title, chat, turn_pick, activity, cost, evidence, scenes, you, bookmark,
                    edit_text, line, f_knower]

    def view(sid: int, turn_id: int | None = None) -> dict:
        scene = store.scene(sid)
        lines = panel.scene_storyline(store, scene)
        turns = [x for x in lines if x["turn_id"]]
        chosen = turn_id or next((x["turn_id"] for x in reversed(turns)), None)
        act = panel.turn_activity(store, chosen) if chosen else None
        label = next((f"{x['index']} · {x['character']}" for x in turns if x["turn_id"] == chosen), "")
        chosen_text = next((x["text"] for x in turns if x["turn_id"] == chosen), "")
        played = scene.settings.get("you") or DIRECTOR
        budget_ = (f", K={scene.settings.get('budget', 3)}"
                   if (scene.method or "").startswith("bookmarks") else "")
        setting_ = f"  \n*Setting:* {esc(scene.setting)}" if scene.setting else ""
        witnessed = scene.settings.get("knowledge") == "witnessed"
        if witnessed:
            setting_ += "  \n*Knowledge:* witnessed — each character knows only what they saw"
        return {
            scene_id: sid,
            title: f"### {esc(scene.title)}\n{esc(METHODS.get(scene.method, scene.method))}"
                   f"{budget_}; you play: {esc(played)}{setting_}",
            edit_text: gr.update(value=chosen_text),
            line: gr.update(label="Your line (as narration: you direct)" if played == DIRECTOR
                            else f"Your line (as {played})"),
            chat: _messages(lines),
            turn_pick: gr.update(choices=[(f"{x['index']} · {x['character']}", x["turn_id"])
                                          for x in turns], value=chosen),
            activity: activity_html(act, label),
            cost: cost_html(panel.cost_meter(store, sid, chosen)),
            evidence: gr.update(choices=act["evidence"] if act else [], value=None),
            scenes: gr.update(choices=scene_choices(services), value=scene_label(scene)),
            you: gr.update(choices=[DIRECTOR, *scene.cast], value=played),
            bookmark: gr.update(choices=_bookmark_choices(store, scene), value=None),
            f_knower: gr.update(choices=["", *scene.cast] if witnessed else [""], value=""),
        }

    @user_errors
    def pick_story(label: str | None):
        if not label:
            return {point: gr.update(), cast: gr.update(choices=[])}
        story_id = parse_id(label)
        info = store.story(story_id)
        chars = store.characters(story_id)
        major = [c.name for c in chars if c.major][:2] or [c.name for c in chars][:2]
        # the middle of the story: memory has something to read, the first turn is not the
        # longest possible synchronization, and the rest of the story is still ahead
        return {point: gr.update(value=info.n_actions // 2, maximum=info.n_actions),
                cast: gr.update(choices=[c.name for c in chars], value=major)}

    @user_errors
    def start(label, point_, cast_, own_, setting_, method_, budget_, order_, you_=DIRECTOR,
              knowledge_="omniscient", card_path=None, lore_path=None):
        if not label:
            raise gr.Error("Choose a story first.")
        story_id = parse_id(label)
        info = store.story(story_id)
        limit = services.settings.max_upload_bytes
        card = read_card(Path(card_path).read_bytes(), Path(card_path).name, max_bytes=limit) \
            if card_path else None
        lore = read_world_info(Path(lore_path).read_bytes(), Path(lore_path).name,
                               char=card.name if card else None, max_bytes=limit) \
            if lore_path else []
        members = list(cast_ or []) + ([own_.strip()] if own_ and own_.strip() else [])
        if card is not None and card.name not in members:
            members.append(card.name)
        if len(members) < 2:
            raise gr.Error("Choose at least two characters for the cast.")
        p = info.n_actions if point_ is None else int(point_)
        if not 0 <= p <= info.n_actions:
            raise gr.Error(f"The story point must be between 0 and {info.n_actions}.")
        scene = store.create_scene(story_id, start_point=p, cast=members, setting=setting_.strip(),
                                   method=method_, settings={"budget": int(budget_),
                                                             "order": order_,
                                                             "you": you_ if you_ in members
                                                             else DIRECTOR,
                                                             "knowledge": knowledge_})
        if card is not None or lore:
            attach(store, scene.id, card=card, lore=[*(card.lorebook if card else []), *lore])
        if card is not None and card.first_message.strip():  # the card's greeting opens
            store.add_turn(scene.id, character=card.name, text=card.first_message.strip()[:2000],
                           source="card")
        prepare_next(scene.id)
        return view(scene.id)

    @user_errors
    def resume(label):
        if not label:
            return {}
        sid = parse_id(label, "scene")
        prepare_next(sid)
        return view(sid)

    @user_errors
    def set_you(sid, who):
        if sid is None:
            return {}
        scene = store.scene(sid)
        store.update_scene_settings(sid, {**scene.settings, "you": who or DIRECTOR})
        prepare_next(sid)
        return view(sid)

    def prepare_next(sid) -> None:
        """Ground the next speaker's memory in the background (round-robin order only: a
        speaker the model chooses is not known before Next)."""
        if sid is None or not services.settings.background_sync:
            return
        try:
            scene = store.scene(sid)
            if scene.settings.get("order") == "model chooses":
                return
            you_play = scene.settings.get("you")
            user_char = None if you_play in (None, DIRECTOR) else you_play
            services.prefetcher.schedule(sid, round_robin(store, scene, user_char))
        except BookmarksError as exc:  # a scene without a speaker yet, a deleted scene
            log.info("no background synchronization for scene %s: %s", sid, exc)

    def waiting_text(sid, who: str, k: int, n: int) -> str:
        status = services.prefetcher.status(sid) if services.settings.background_sync else {}
        work = "".join(f"<br>⟳ synchronizing {esc(x)}" for x in BOARD.lines(sid))
        if status.get("state") == "preparing" and status.get("character") == who:
            return (f"*thinking… (turn {k + 1} of {n}: memory being prepared in the background, "
                    f"{status['seconds']:.0f} s so far)*{work}")
        return f"*thinking… (turn {k + 1} of {n}: memory)*{work}"

    async def speaker_for(scene) -> str:
        you_play = scene.settings.get("you")
        user_char = None if you_play in (None, DIRECTOR) else you_play
        if scene.settings.get("order") == "model chooses":
            return await choose_speaker(store, services.llms["memory"], scene, user_char)
        return round_robin(store, scene, user_char)

    async def run_turns(sid, n):
        """Generate n turns; each streams in (raw text while it arrives, then the
        cleaned line once the turn is committed)."""
        if sid is None:
            raise gr.Error("Start or resume a scene first.")
        n = max(1, min(20, int(n or 1)))
        for k in range(n):
            scene = store.scene(sid)
            try:
                who = await speaker_for(scene)
            except BookmarksError as exc:
                raise gr.Error(str(exc)) from None
            latest = {"text": ""}

            def on_text(text: str, latest: dict = latest) -> None:
                latest["text"] = text

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
            base, shown = view(sid), None
            while not task.done():
                body = esc(latest["text"]) if latest["text"] else waiting_text(sid, who, k, n)
                if body != shown:
                    shown = body
                    yield {**base, chat: base[chat] + [
                        {"role": "assistant", "content": f"⏳ **{esc(who)}:** {body}"}]}
                await asyncio.sleep(0.2)
            try:
                task.result()
            except BookmarksError as exc:
                raise gr.Error(str(exc)) from None
            prepare_next(sid)
            yield view(sid)

    async def next_one(sid):
        async for update in run_turns(sid, 1):
            yield update

    @user_errors
    def say(sid, who, text):
        if sid is None:
            raise gr.Error("Start or resume a scene first.")
        scene = store.scene(sid)
        speaker = who if who and who != DIRECTOR else "narration"
        add_user_turn(store, sid, speaker, text or "")
        prepare_next(sid)
        return {**view(sid), line: ""} if scene else {}

    async def regenerate(sid):
        """A new sample for the last model line, streamed in like any turn (the old line
        stays until the new one is committed)."""
        if sid is None:
            raise gr.Error("Start or resume a scene first.")
        scene = store.scene(sid)
        turns = store.turns(sid)
        if not turns or turns[-1].source != "model":
            raise gr.Error("The last line is not the model's; there is nothing to regenerate.")
        who, latest = turns[-1].character, {"text": ""}

        def on_text(text: str) -> None:
            latest["text"] = text

        task = asyncio.create_task(regenerate_last(
            store, services.llms, sid, budget=scene.settings.get("budget", 3),
            window=services.settings.scene_window, state_block=services.settings.state_block,
            on_text=on_text))
        base, shown = view(sid), None
        while not task.done():
            body = esc(latest["text"]) if latest["text"] else waiting_text(sid, who, 0, 1)
            if body != shown:
                shown = body
                yield {**base, chat: base[chat][:-1] + [
                    {"role": "assistant", "content": f"⏳ **{esc(who)}** (regenerating): {body}"}]}
            await asyncio.sleep(0.2)
        try:
            task.result()
        except (BookmarksError, ValueError) as exc:
            raise gr.Error(str(exc)) from None
        prepare_next(sid)
        yield view(sid)

    @user_errors
    def undo(sid):
        if sid is None:
            raise gr.Error("Start or resume a scene first.")
        if undo_last(store, sid) is None:
            gr.Warning("The scene has no turn to undo.")
        prepare_next(sid)
        return view(sid)

    @user_errors
    def fork(sid, turn_id):
        if sid is None:
            raise gr.Error("Start or resume a scene first.")
        new = fork_at(store, sid, turn_id)
        gr.Info(f"Forked into scene {new.id}; memory now follows this branch.")
        prepare_next(new.id)
        return view(new.id)

    @user_errors
    def edit(sid, turn_id, text):
        if sid is None or not turn_id:
            raise gr.Error("Select a line to edit.")
        if not (text or "").strip():
            raise gr.Error("The new text is empty.")
        store.edit_turn(turn_id, text.strip())
        prepare_next(sid)
        return view(sid, turn_id)

    @user_errors
    def pick_turn(sid, turn_id):
        return view(sid, turn_id) if sid is not None and turn_id else {}

    @user_errors
    def show_passage(sid, index):
        if sid is None or index in (None, ""):
            return ""
        return passage_md(panel.passage(store, store.scene(sid), int(index)))

    @user_errors
    def filter_bookmarks(sid, kind, subject, title_, knower=""):
        if sid is None:
            return gr.update(choices=[])
        scene = store.scene(sid)
        return gr.update(choices=_bookmark_choices(store, scene, kind, subject, title_, knower),
                         value=None)

    @user_errors
    def show_bookmark(sid, bid):
        if sid is None or not bid:
            return "", "", False
        tl = panel.bookmark_timeline(store, store.scene(sid), int(bid))
        last = tl["versions"][-1]["text"] if tl["versions"] else ""
        return timeline_html(tl), last, bool(tl["bookmark"]["pinned"])

    @user_errors
    def save_bookmark(sid, bid, text, pin):
        if sid is None or not bid:
            raise gr.Error("Choose a bookmark first.")
        panel.edit_bookmark(store, store.scene(sid), int(bid), text or "", bool(pin))
        gr.Info("Bookmark saved.")
        return show_bookmark(sid, bid)

    def refresh_lists():
        return {story: gr.update(choices=story_choices(services)),
                scenes: gr.update(choices=scene_choices(services))}

    model_events = {"concurrency_id": "models", "concurrency_limit": 2}
    tab.select(refresh_lists, None, [story, scenes])
    story.change(pick_story, [story], [point, cast])
    cast.change(lambda members: gr.update(choices=[DIRECTOR, *(members or [])]), [cast], [you])
    start_btn.click(start, [story, point, cast, own, setting, method, budget, order, you,
                            knowledge, card_file, lore_file], view_outputs)

    @user_errors
    def do_export(sid, fmt_):
        if sid is None:
            raise gr.Error("Start or resume a scene first.")
        scene = store.scene(sid)
        if fmt_ == "worldinfo":
            text, suffix = world_info_for(store, scene.story_id, scene_id=sid), ".worldinfo.json"
        else:
            text = export_scene(store, sid, fmt_)
            suffix = {"markdown": ".md", "fountain": ".fountain", "jsonl": ".jsonl"}[fmt_]
        folder = services.settings.data_dir / "exports"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"scene-{sid}{suffix}"
        path.write_text(text, encoding="utf-8")
        return str(path)

    export_btn.click(do_export, [scene_id, export_fmt], [export_file])
    scenes.input(resume, [scenes], view_outputs)
    you.input(set_you, [scene_id, you], view_outputs)
    next_btn.click(next_one, [scene_id], view_outputs, **model_events)
    auto_btn.click(run_turns, [scene_id, auto_n], view_outputs, **model_events)
    say_btn.click(say, [scene_id, you, line], [*view_outputs, line])
    line.submit(say, [scene_id, you, line], [*view_outputs, line])
    regen_btn.click(regenerate, [scene_id], view_outputs, **model_events)
    undo_btn.click(undo, [scene_id], view_outputs)
    fork_btn.click(fork, [scene_id, turn_pick], view_outputs)
    edit_btn.click(edit, [scene_id, turn_pick, edit_text], view_outputs)
    turn_pick.input(pick_turn, [scene_id, turn_pick], view_outputs)
    evidence.input(show_passage, [scene_id, evidence], [passage])
    for box in (f_type, f_subject, f_title, f_knower):
        box.change(filter_bookmarks, [scene_id, f_type, f_subject, f_title, f_knower], [bookmark])
    bookmark.input(show_bookmark, [scene_id, bookmark], [timeline, bm_text, bm_pin])
    bm_save.click(save_bookmark, [scene_id, bookmark, bm_text, bm_pin], [timeline, bm_text, bm_pin])
    return {"story": story}


def _messages(lines: list[dict]) -> list[dict]:
    out = []
    for x in lines:
        who = esc(x["character"])
        body = f"*{esc(x['text'])}*" if x["character"] == "narration" else f"**{who}:** {esc(x['text'])}"
        if x.get("edited"):
            body += " <small>(edited)</small>"
        if x["source"] == "story":
            out.append({"role": "assistant", "content": f"<small>story</small> [{x['index']}] {body}"})
        else:
            out.append({"role": "user" if x["source"] == "user" else "assistant",
                        "content": f"[{x['index']}] {body}"})
    return out


def _bookmark_choices(store, scene, kind="", subject="", title="", knower=""):
    """Bookmarks of the scene's memory (witnessed knowledge: each knower's own)."""
    rows = panel.bookmark_list(store, scene, kind=kind, subject=subject, title=title,
                               knower=knower or "")
    return [(f"#{b['id']} {b['title']} [{b['type']}] p={b['p']}"
             f"{' · known to ' + b['knower'] if b['knower'] else ''}"
             f"{' 📌' if b['pinned'] else ''}", b["id"]) for b in rows]
