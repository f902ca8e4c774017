"""Play tab, New-scene form: a story (or none), a point, a cast, a card and lorebook, who
the writer plays. The form only feeds "Start scene": none of its fields changes the open
scene, and opening a scene never rewrites the form. Errors are said under the button."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import gradio as gr

from bookmarks.engine.methods import METHODS
from bookmarks.errors import BookmarksError
from bookmarks.scenes.new_scene import YOU, start_scene
from bookmarks.services import Services
from bookmarks.stories.sillytavern import Card
from bookmarks.stories.sillytavern_card import read_card
from bookmarks.stories.sillytavern_lorebook import read_world_info

from .library import story_choices
from .play_scene import DIRECTOR, ScenePage
from .render import esc, message_of, note, parse_id, said

METHOD_CHOICES = [(label, key) for key, label in METHODS.items()]


@dataclass
class Form:
    story: gr.Dropdown
    point: gr.Number
    cast: gr.CheckboxGroup
    card_file: gr.File
    card_preview: gr.Markdown
    you: gr.Dropdown
    own: gr.Textbox
    lore_file: gr.File
    setting: gr.Textbox
    method: gr.Dropdown
    budget: gr.Slider
    order: gr.Radio
    knowledge: gr.Radio
    start_btn: gr.Button
    status: gr.Markdown


def build_form(services: Services) -> Form:
    gr.Markdown("### New scene")
    story = gr.Dropdown(story_choices(services), label="Story (or none: a card alone plays "
                        "on an empty stage)", elem_id="play-story", value=None)
    point = gr.Number(label="Start after story action", precision=0, minimum=0,
                      elem_id="play-point")
    cast = gr.CheckboxGroup([], label="Cast (2 or more)", elem_id="play-cast")
    card_file = gr.File(label="A SillyTavern character card (.json, .png; optional)",
                        file_types=[".json", ".png"], type="filepath", elem_id="card-upload",
                        height=150)
    card_preview = gr.Markdown(elem_id="card-preview")
    you = gr.Dropdown([DIRECTOR], value=DIRECTOR, label="You play", elem_id="play-you")
    with gr.Accordion("More: your own character, lorebook, setting, method, knowledge",
                      open=False, elem_id="play-more"):
        own = gr.Textbox(label="Add a character of your own (optional)", elem_id="play-own")
        lore_file = gr.File(label="SillyTavern World Info / lorebook (.json, optional)",
                            file_types=[".json"], type="filepath", elem_id="lore-upload",
                            height=150)
        setting = gr.Textbox(label="Setting (optional)", lines=2)
        method = gr.Dropdown(METHOD_CHOICES, value="bookmarks", label="Grounding method",
                             elem_id="play-method")
        budget = gr.Slider(1, 8, value=services.settings.budget, step=1,
                           label="Bookmark budget K")
        order = gr.Radio(["round-robin", "model chooses"], value="round-robin",
                         label="Next speaker")
        knowledge = gr.Radio(["omniscient", "witnessed"], value="omniscient",
                             label="Knowledge: everything in the story, or only what each "
                                   "character witnessed", elem_id="play-knowledge")
    start_btn = gr.Button("Start scene", variant="primary", elem_id="start-scene")
    status = gr.Markdown(elem_id="form-status")
    return Form(story, point, cast, card_file, card_preview, you, own, lore_file, setting,
                method, budget, order, knowledge, start_btn, status)


def _card(services: Services, path: str | None) -> Card | None:
    if not path:
        return None
    return read_card(Path(path).read_bytes(), Path(path).name,
                     max_bytes=services.settings.max_upload_bytes)


def card_preview_md(card: Card) -> str:
    lore = len(card.lorebook)
    about = " ".join((card.description or card.personality).split())
    parts = [f"**{esc(card.name)}** joins the cast"
             + (f", with {lore} lorebook entr{'y' if lore == 1 else 'ies'}" if lore else "")
             + "."]
    if about:
        parts.append(f"*{esc(about[:240])}{'…' if len(about) > 240 else ''}*")
    if card.first_message.strip():
        greeting = " ".join(card.first_message.split())
        parts.append(f"Opens with: “{esc(greeting[:200])}{'…' if len(greeting) > 200 else ''}”")
    return "  \n".join(parts)


def wire_form(services: Services, form: Form, page: ScenePage) -> None:
    store = services.store

    def cast_offer(label: str | None, card: Card | None, chosen: list[str] | None = None):
        """Cast choices and ticks for the chosen story with the card's character added
        (no story: the card's character and you, on an empty stage)."""
        if label:
            story_id = parse_id(label)
            chars = store.characters(story_id)
            names = [c.name for c in chars]
            ticked = list(chosen) if chosen is not None else (
                [c.name for c in chars if c.major][:2] or names[:2])
        else:
            names, ticked = [], list(chosen or [])
        if card is not None:
            names = [*names, card.name] if card.name not in names else names
            ticked = [*ticked, card.name] if card.name not in ticked else ticked
            if not label:
                names, ticked = [card.name, YOU], [card.name, YOU]
        ticked = [n for n in ticked if n in names]
        return names, ticked

    def you_offer(members: list[str], current: str | None) -> dict:
        return gr.update(choices=[DIRECTOR, *members],
                         value=current if current in members else DIRECTOR)

    @said(form.status)
    def pick_story(label, card_path, current_you):
        card = _card(services, card_path)
        names, ticked = cast_offer(label, card)
        out = {form.cast: gr.update(choices=names, value=ticked),
               form.you: you_offer(ticked, current_you)}
        if label:
            # the middle of the story: memory has something to read, the first turn is not
            # the longest possible synchronization, and the rest of the story is still ahead
            info = store.story(parse_id(label))
            out[form.point] = gr.update(value=info.n_actions // 2, maximum=info.n_actions)
        return out

    def pick_card(card_path, label, chosen, current_you):
        """Right after upload: a preview, and the card's character in the cast and You-play
        lists (before any scene starts)."""
        try:
            card = _card(services, card_path)
        except (BookmarksError, ValueError) as exc:
            return {form.card_preview: f"**This card cannot be used.** {esc(message_of(exc))}",
                    form.status: ""}
        if card is None:  # cleared: the story's cast as it was, without a card's character
            names, ticked = cast_offer(label, None, [n for n in chosen or [] if n != YOU])
            return {form.card_preview: "", form.status: "",
                    form.cast: gr.update(choices=names, value=ticked),
                    form.you: you_offer(ticked, current_you)}
        names, ticked = cast_offer(label, card, chosen if label else None)
        return {form.card_preview: card_preview_md(card), form.status: "",
                form.cast: gr.update(choices=names, value=ticked),
                form.you: you_offer(ticked, current_you)}

    def start(label, point, cast, own, setting, method, budget, order, you, knowledge,
              card_path=None, lore_path=None):  # no card or lore: optional over the API too
        try:
            card = _card(services, card_path)
            lore = read_world_info(Path(lore_path).read_bytes(), Path(lore_path).name,
                                   char=card.name if card else None,
                                   max_bytes=services.settings.max_upload_bytes) \
                if lore_path else []
            scene = start_scene(
                store, story_id=parse_id(label) if label else None,
                point=None if point is None else int(point), cast=list(cast or []),
                own=own or "", setting=setting or "", method=method, card=card, lore=lore,
                you=None if you in (None, DIRECTOR) else you,
                settings={"budget": int(budget), "order": order, "knowledge": knowledge})
        except (gr.Error, BookmarksError, ValueError) as exc:
            return {form.status: note(message_of(exc))}
        page.prepare_next(scene.id)
        return {**page.view(scene.id), form.status: ""}

    form.story.change(pick_story, [form.story, form.card_file, form.you],
                      [form.point, form.cast, form.you, form.status])
    form.card_file.change(pick_card, [form.card_file, form.story, form.cast, form.you],
                          [form.card_preview, form.cast, form.you, form.status])
    def members_offer(members, own, current):
        own = " ".join((own or "").split())
        return you_offer([*(members or []), *([own] if own and own not in (members or [])
                                               else [])], current)

    form.cast.input(members_offer, [form.cast, form.own, form.you], [form.you])
    form.own.input(members_offer, [form.cast, form.own, form.you], [form.you])
    form.start_btn.click(start, [form.story, form.point, form.cast, form.own, form.setting,
                                 form.method, form.budget, form.order, form.you,
                                 form.knowledge, form.card_file, form.lore_file],
                         [*page.outputs, form.status])
