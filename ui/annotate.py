"""Annotate tab: blind side-by-side judgments. The page never shows which method wrote a
side until the vote is in; sides are randomized per item and annotator (stored).

The annotator is the signed-in user: votes, the sides shown and rationales are stored
under their name, never under a name typed on the page. An annotator works through the
campaigns that give them items and sees only their own progress; the owner (and the single
local user, without accounts) can also judge any arena item outside a campaign."""

from __future__ import annotations

import time

import gradio as gr

from bookmarks.engine.methods import METHODS
from bookmarks.errors import BookmarksError
from bookmarks.evaluation import arena, campaigns
from bookmarks.services import Services

from .auth import Access
from .render import esc

CHOICES = {"vote-a": ("left", "A better"), "vote-tie": ("tie", "Tie"),
           "vote-b": ("right", "B better"), "vote-bad": ("both_bad", "Both bad")}
POOL = "All arena items (no campaign)"


def _side(turns: list[dict], label: str) -> str:
    lines = "".join(f"<p><b>{esc(t['character'])}:</b> {esc(t['text'])}</p>" for t in turns)
    return f"<div class='bm-side'><h4>{label}</h4>{lines or '<p><i>(empty)</i></p>'}</div>"


def campaign_choices(services: Services, name: str, role: str) -> list[tuple[str, int]]:
    """The open campaigns with work for this user, with their own progress; the owner's
    pool of all items outside campaigns last."""
    out = []
    for c in services.store.annotator_campaigns(name):
        if c["status"] != "open":
            continue
        (mine,) = campaigns.progress(services.store, c["id"], name) or [None]
        done = f" — {mine['assigned'] - mine['left']} of {mine['assigned']} done" if mine else ""
        out.append((f"{c['name']}{done}", c["id"]))
    if role == "owner":
        out.append((POOL, 0))
    return out


def _head(item: dict) -> str:
    first, ctx = item["first_line"], item["context"]
    cast = ", ".join(f"{esc(n)} ({k} lines)" for n, k in ctx["characters"])
    before = "".join(f"<p><i>{esc(t)}</i></p>" if who == "narration"
                     else f"<p><b>{esc(who)}:</b> {esc(t)}</p>" for who, t in ctx["before"])
    return (f"<details class='bm-context'><summary>The story so far — <i>{esc(ctx['story'])}"
            f"</i>, up to action {ctx['point']}</summary><p>Characters: {cast}</p>"
            f"{before}</details><p><i>{esc(item['setting'])}</i></p>"
            f"<p><b>{esc(first['character'])}:</b> {esc(first['text'])}</p>")


def build_annotate_tab(services: Services, access: Access) -> dict:
    store = services.store
    with gr.Tab("Annotate") as tab:
        current = gr.State(None)
        gr.Markdown("Read the shared start, then the two continuations, and say which one keeps "
                    "the characters more faithful to the story. You learn which method wrote "
                    "each side only after voting.")
        who = gr.Markdown(elem_id="annotate-who")
        with gr.Row():
            campaign = gr.Dropdown([], label="Campaign", elem_id="annotate-campaign",
                                   value=None, scale=2)
            next_btn = gr.Button("Start / next item", variant="primary", elem_id="annotate-next")
        progress = gr.Markdown(elem_id="annotate-progress")
        start = gr.HTML(elem_id="annotate-start")
        with gr.Row():
            left = gr.HTML(elem_id="side-a")
            right = gr.HTML(elem_id="side-b")
        with gr.Row():
            buttons = {key: gr.Button(label, elem_id=key, interactive=False)
                       for key, (_, label) in CHOICES.items()}
        rationale = gr.Textbox(label="Why? (optional)", lines=2, elem_id="annotate-why")
        skip_btn = gr.Button("Skip this item", interactive=False, elem_id="vote-skip")
        reveal = gr.Markdown(elem_id="annotate-reveal")

    all_buttons = [*buttons.values(), skip_btn]
    locked = [gr.update(interactive=False)] * len(all_buttons)

    def refresh(request: gr.Request):
        user = access.user(request)
        options = campaign_choices(services, user.name, user.role)
        signed = ("" if not access.enabled else
                  f"Signed in as **{esc(user.name)}** ({user.role}).")
        if not options:
            signed += " No campaign has work for you yet."
        return (gr.update(choices=options, value=options[0][1] if options else None), signed)

    def load(cid, request: gr.Request):
        user = access.user(request)
        if cid is None:  # asked before the list arrived: their first campaign (or the pool)
            options = campaign_choices(services, user.name, user.role)
            cid = options[0][1] if options else None
        try:
            if cid:
                item = campaigns.next_item(store, int(cid), user.name)
            elif user.role == "owner" and cid == 0:
                item = arena.next_item(store, user.name)
            else:
                return (None, "Choose a campaign first.", "", "", "", "", *locked)
        except (BookmarksError, ValueError) as exc:
            return (None, esc(str(exc)), "", "", "", "", *locked)
        if item is None:
            if not cid and not store.arena_items():
                message = ("Nothing to judge yet: no arena items exist. Items come from "
                           "Evaluate → Arena (Generate starts, then Run continuations), a "
                           "campaign, or `bookmarks arena generate` and `bookmarks arena run`.")
            elif cid or store.judged_items(user.name):
                message = "All done — thank you! Nothing is left for you here."
            else:
                message = "No item is left for you to judge."
            return (None, message, "", "", "", "", *locked)
        p = item["progress"]
        return ({"item_id": item["item_id"], "shown_at": item["shown_at"], "campaign": cid},
                f"Item {p['done'] + 1} of {p['total']}", _head(item), _side(item["left"], "A"),
                _side(item["right"], "B"), "", *[gr.update(interactive=True)] * len(all_buttons))

    def make_vote(choice: str):
        def do_vote(state, why: str, request: gr.Request):
            user = access.user(request)  # the vote is theirs: no name comes from the page
            if not state:
                raise gr.Error("Load an item first.", print_exception=False)
            seconds = round(time.time() - state["shown_at"], 1)
            try:
                if state.get("campaign"):
                    sides = campaigns.vote(store, int(state["campaign"]), state["item_id"],
                                           user.name, choice, rationale=why or "", seconds=seconds)
                elif user.role == "owner":
                    sides = arena.vote(store, state["item_id"], user.name, choice,
                                       rationale=why or "", seconds=seconds)
                else:
                    raise BookmarksError("Votes outside a campaign are the owner's.")
            except (BookmarksError, ValueError) as exc:
                raise gr.Error(str(exc), print_exception=False) from None
            text = ("Skipped." if choice == "skip" else
                    f"Recorded. **A** was {esc(METHODS.get(sides['left'], sides['left']))}, "
                    f"**B** was {esc(METHODS.get(sides['right'], sides['right']))}.")
            own = gr.update(choices=campaign_choices(services, user.name, user.role),
                            value=state.get("campaign"))  # their progress, as it is now
            return (None, text, "", own, *locked)
        do_vote.__name__ = f"vote_{choice}"
        return do_vote

    load_out = [current, progress, start, left, right, reveal, *all_buttons]
    next_btn.click(load, [campaign], load_out)
    tab.select(refresh, None, [campaign, who])
    vote_out = [current, reveal, rationale, campaign, *all_buttons]
    for key, (choice, _) in CHOICES.items():
        buttons[key].click(make_vote(choice), [current, rationale], vote_out)
    skip_btn.click(make_vote("skip"), [current, rationale], vote_out)
    return {"refresh": refresh, "outputs": [campaign, who]}
