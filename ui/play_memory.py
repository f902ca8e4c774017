"""Play tab, memory column: what the memory did for the selected turn, the cost meter,
evidence passages, and a browser of the scene's bookmarks with their version timelines."""

from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from bookmarks.scenes import panel
from bookmarks.services import Services

from .panel import activity_html, passage_md, timeline_html
from .render import nothing, said


@dataclass
class MemoryColumn:
    activity: gr.HTML
    cost: gr.HTML
    evidence: gr.Dropdown
    passage: gr.Markdown
    f_type: gr.Dropdown
    f_subject: gr.Textbox
    f_title: gr.Textbox
    f_knower: gr.Dropdown
    bookmark: gr.Dropdown
    timeline: gr.HTML
    bm_text: gr.Textbox
    bm_pin: gr.Checkbox
    bm_save: gr.Button
    status: gr.Markdown


def build_memory_column() -> MemoryColumn:
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
        status = gr.Markdown(elem_id="bookmark-status")
    return MemoryColumn(activity, cost, evidence, passage, f_type, f_subject, f_title,
                        f_knower, bookmark, timeline, bm_text, bm_pin, bm_save, status)


def bookmark_choices(store, scene, kind="", subject="", title="", knower=""):
    """Bookmarks of the scene's memory (witnessed knowledge: each knower's own)."""
    rows = panel.bookmark_list(store, scene, kind=kind, subject=subject, title=title,
                               knower=knower or "")
    return [(f"#{b['id']} {b['title']} [{b['type']}] p={b['p']}"
             f"{' · known to ' + b['knower'] if b['knower'] else ''}"
             f"{' (pinned)' if b['pinned'] else ''}", b["id"]) for b in rows]


def wire_memory(services: Services, mem: MemoryColumn, scene_id: gr.State) -> None:
    store = services.store
    bm_outputs = [mem.timeline, mem.bm_text, mem.bm_pin, mem.status]

    @said(mem.status, [mem.passage])
    def show_passage(sid, index):
        if sid is None or index in (None, ""):
            return {mem.passage: ""}
        return {mem.passage: passage_md(panel.passage(store, store.scene(sid), int(index)))}

    @said(mem.status, [mem.bookmark])
    def filter_bookmarks(sid, kind, subject, title_, knower=""):
        if sid is None:
            return {mem.bookmark: gr.update(choices=[], value=None)}
        scene = store.scene(sid)
        return {mem.bookmark: gr.update(
            choices=bookmark_choices(store, scene, kind, subject, title_, knower), value=None)}

    def shown(sid, bid) -> dict:
        if sid is None or not bid:
            return {mem.timeline: "", mem.bm_text: "", mem.bm_pin: False, mem.status: ""}
        tl = panel.bookmark_timeline(store, store.scene(sid), int(bid))
        last = tl["versions"][-1]["text"] if tl["versions"] else ""
        return {mem.timeline: timeline_html(tl), mem.bm_text: last,
                mem.bm_pin: bool(tl["bookmark"]["pinned"]), mem.status: ""}

    @said(mem.status, bm_outputs)
    def show_bookmark(sid, bid):
        return shown(sid, bid)

    @said(mem.status, bm_outputs)
    def save_bookmark(sid, bid, text, pin):
        if sid is None or not bid:
            return {**nothing(bm_outputs), mem.status: "Choose a bookmark first."}
        panel.edit_bookmark(store, store.scene(sid), int(bid), text or "", bool(pin))
        return {**shown(sid, bid), mem.status: "Bookmark saved."}

    mem.evidence.input(show_passage, [scene_id, mem.evidence], [mem.passage, mem.status])
    filters = [scene_id, mem.f_type, mem.f_subject, mem.f_title, mem.f_knower]
    for box in (mem.f_type, mem.f_subject, mem.f_title, mem.f_knower):
        box.change(filter_bookmarks, filters, [mem.bookmark, mem.status])
    mem.bookmark.input(show_bookmark, [scene_id, mem.bookmark], bm_outputs)
    mem.bm_save.click(save_bookmark, [scene_id, mem.bookmark, mem.bm_text, mem.bm_pin],
                      bm_outputs)
