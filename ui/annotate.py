"""Annotate tab: blind side-by-side judgments. The page never shows which method wrote a
side until the vote is in; sides are randomized per item and annotator (stored)."""

from __future__ import annotations

import time

import gradio as gr

from bookmarks.engine.methods import METHODS
from bookmarks.errors import BookmarksError
from bookmarks.evaluation import arena
from bookmarks.services import Services

from .render import esc

CHOICES = {"vote-a": ("left", "A better"), "vote-tie": ("tie", "Tie"),
           "vote-b": ("right", "B better"), "vote-bad": ("both_bad", "Both bad")}


def _side(turns: list[dict], label: str) -> str:
    lines = "".join(f"<p><b>{esc(t['character'])}:</b> {esc(t['text'])}</p>" for t in turns)
    return f"<div class='bm-side'><h4>{label}</h4>{lines or '<p><i>(empty)</i></p>'}</div>"


def build_annotate_tab(services: Services) -> None:
    store = services.store
    with gr.Tab("Annotate"):
        current = gr.State(None)
        gr.Markdown("Read the shared start, then the two continuations, and say which one keeps "
                    "the characters more faithful to the story. You learn which method wrote "
                    "each side only after voting.")
        with gr.Row():
            annotator = gr.Textbox(label="Annotator id", elem_id="annotator", scale=2)
            next_btn = gr.Button("Start / next item", variant="primary", elem_id="annotate-next")
        progress = gr.Markdown(elem_id="annotate-progress")
        start = gr.HTML(elem_id="annotate-start")
        with gr.Row():
            left = gr.HTML(elem_id="side-a")
            right = gr.HTML(elem_id="side-b")
        with gr.Row():
            buttons = {key: gr.Button(label, elem_id=key, interactive=False)
                       for key, (_, label) in CHOICES.items()}
        rationale = gr.Textbox(label="Why? (optional)", lines=2)
        skip_btn = gr.Button("Skip this item", interactive=False, elem_id="vote-skip")
        reveal = gr.Markdown(elem_id="annotate-reveal")

    all_buttons = [*buttons.values(), skip_btn]

    def load(who: str):
        try:
            item = arena.next_item(store, who or "")
        except (BookmarksError, ValueError) as exc:
            raise gr.Error(str(exc)) from None
        if item is None:
            done = len(store.judged_items(who.strip()))
            if not store.arena_items():
                message = ("Nothing to judge yet: no arena items exist. Items come from "
                           "Evaluate → Arena (Generate starts, then Run continuations) or "
                           "`bookmarks arena generate` and `bookmarks arena run`.")
            elif done:
                message = f"All done — {done} items judged. Thank you!"
            else:
                message = "No item is left for you to judge."
            return (None, message, "", "", "", "",
                    *[gr.update(interactive=False)] * len(all_buttons))
        p = item["progress"]
        first = item["first_line"]
        ctx = item["context"]
        cast = ", ".join(f"{esc(n)} ({k} lines)" for n, k in ctx["characters"])
        before = "".join(f"<p><i>{esc(t)}</i></p>" if who == "narration"
                         else f"<p><b>{esc(who)}:</b> {esc(t)}</p>" for who, t in ctx["before"])
        head = (f"<details class='bm-context'><summary>The story so far — <i>{esc(ctx['story'])}"
                f"</i>, up to action {ctx['point']}</summary><p>Characters: {cast}</p>"
                f"{before}</details>"
                f"<p><i>{esc(item['setting'])}</i></p><p><b>{esc(first['character'])}:</b> "
                f"{esc(first['text'])}</p>")
        return ({"item_id": item["item_id"], "shown_at": item["shown_at"]},
                f"Item {p['done'] + 1} of {p['total']}", head, _side(item["left"], "A"),
                _side(item["right"], "B"), "", *[gr.update(interactive=True)] * len(all_buttons))

    def make_vote(choice: str):
        def do_vote(state, who: str, why: str):
            if not state:
                raise gr.Error("Load an item first.")
            try:
                sides = arena.vote(store, state["item_id"], who.strip(), choice, rationale=why or "",
                                   seconds=round(time.time() - state["shown_at"], 1))
            except (BookmarksError, ValueError) as exc:
                raise gr.Error(str(exc)) from None
            text = ("Skipped." if choice == "skip" else
                    f"Recorded. **A** was {esc(METHODS.get(sides['left'], sides['left']))}, "
                    f"**B** was {esc(METHODS.get(sides['right'], sides['right']))}.")
            return (None, text, "", *[gr.update(interactive=False)] * len(all_buttons))
        return do_vote

    load_out = [current, progress, start, left, right, reveal, *all_buttons]
    next_btn.click(load, [annotator], load_out)
    annotator.submit(load, [annotator], load_out)
    vote_out = [current, reveal, rationale, *all_buttons]
    for key, (choice, _) in CHOICES.items():
        buttons[key].click(make_vote(choice), [current, annotator, rationale], vote_out)
    skip_btn.click(make_vote("skip"), [current, annotator, rationale], vote_out)
