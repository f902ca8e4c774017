"""A scene (any branch) out as Markdown, Fountain or JSONL: the story lines it starts
from are left out; its own lines (and those a fork inherited) go out in order, under the
scene's title, with its setting."""

from __future__ import annotations

import json

from bookmarks.engine.lineage import Lineage
from bookmarks.store import Store
from bookmarks.stories.fountain import to_fountain
from bookmarks.stories.story import NARRATION, Action

FORMATS = ("markdown", "fountain", "jsonl")


def scene_title(store: Store, scene_id: int) -> str:
    """The scene's title naming its story once ("X — from action 469", not "X — X — …")."""
    scene = store.scene(scene_id)
    story = store.story(scene.story_id).title
    return scene.title if story.casefold() in scene.title.casefold() else f"{story} — {scene.title}"


def scene_heading(store: Store, scene_id: int) -> str:
    """Where the scene starts: the story's chapter at its start point (the title is on the
    title page already), else the point itself."""
    scene = store.scene(scene_id)
    at = store.actions(scene.story_id, scene.start_point, scene.start_point) \
        if scene.start_point else []
    chapter = " ".join((at[0].chapter or "").split()) if at else ""
    return chapter or (f"After action {scene.start_point}" if scene.start_point else "Opening")


def scene_actions(store: Store, scene_id: int) -> list[Action]:
    scene = store.scene(scene_id)
    lineage = Lineage.of(store, scene.branch_id)
    first = lineage.segments[1][1] if len(lineage.segments) > 1 else scene.start_point + 1
    chapter = scene_heading(store, scene_id)
    return [Action(index=ln.index, character=ln.character, text=ln.text, chapter=chapter)
            for ln in lineage.lines(store, first, lineage.length(store))]


def export_scene(store: Store, scene_id: int, fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"The scene export format is one of {', '.join(FORMATS)}, not {fmt!r}.")
    scene = store.scene(scene_id)
    story = store.story(scene.story_id)
    actions = scene_actions(store, scene_id)
    if fmt == "jsonl":
        return "".join(json.dumps({"character": a.character, "text": a.text,
                                   "chapter": a.chapter}, ensure_ascii=False) + "\n"
                       for a in actions)
    if fmt == "fountain":
        opening = [Action(index=1, character=NARRATION, text=scene.setting,
                          chapter=scene_heading(store, scene_id))] if scene.setting else []
        return to_fountain(scene_title(store, scene_id), opening + actions)
    lines = [f"# {scene.title}", "", f"*From {story.title}, after action {scene.start_point}.*"]
    if scene.setting:
        lines += ["", f"*{scene.setting}*"]
    lines.append("")
    for a in actions:
        lines.append(f"*{a.text}*" if a.character == NARRATION else f"**{a.character}:** {a.text}")
        lines.append("")
    return "\n".join(lines)
