"""What the memory side panel shows, as plain data: per-turn memory activity, the cost
meter, the scene's storyline, and a browser of bookmarks with version timelines.
No Gradio here: `ui/` renders these dictionaries."""

from __future__ import annotations

import difflib

from bookmarks.engine.lineage import Lineage
from bookmarks.engine.recall import memory_spaces, scoped_flags, visible_bookmarks
from bookmarks.errors import BookmarksError
from bookmarks.memory import (
    PROFILE,
    ConceptContent,
    ProfileContent,
    StateContent,
    StateNode,
    render_content,
)
from bookmarks.scenes.lore_report import lore_report
from bookmarks.scenes.sync_account import account
from bookmarks.store import SceneInfo, Store

CONTEXT = 3  # trunk lines shown before a scene's first turn


def scene_storyline(store: Store, scene: SceneInfo) -> list[dict]:
    """The lines a scene shows: a little of the story before it, then every turn on its
    lineage (a fork shows the lines it inherited)."""
    lineage = Lineage.of(store, scene.branch_id)
    first_turn = lineage.segments[1][1] if len(lineage.segments) > 1 else scene.start_point + 1
    end = lineage.length(store)
    turn_ids = {}
    for branch_id, lo, hi in lineage.segments[1:]:
        for t in store.branch_turns(branch_id, lo, min(hi, end)):
            turn_ids[t.idx] = t
    out = []
    for ln in lineage.lines(store, max(1, first_turn - CONTEXT), end):
        t = turn_ids.get(ln.index)
        out.append({"index": ln.index, "character": ln.character, "text": ln.text,
                    "source": t.source if t else "story", "turn_id": t.id if t else None,
                    "inherited": bool(t and t.branch_id != scene.branch_id),
                    "edited": bool(t and t.edited_at)})
    return out


def turn_activity(store: Store, turn_id: int) -> dict:
    events = store.turn_events(turn_id)
    story_id = store.scene(store.turn(turn_id).scene_id).story_id
    outcome: dict[str, dict] = {}
    for e in events:
        if e["kind"] in ("reused", "initialized", "collapsed"):
            outcome[e.get("proposed_title") or e["title"]] = e
    proposed = []
    for e in events:
        if e["kind"] == "proposed":
            o = outcome.get(e["title"], {})
            proposed.append({**e, "outcome": o.get("kind", "?"), "bookmark": o.get("bookmark"),
                             "from_p": o.get("from_p"), "matched_title": o.get("title")})
    grounded = next((e for e in events if e["kind"] == "grounded"), {"text": "", "pieces": []})
    usage = next((e["memory"] for e in events if e["kind"] == "usage"), {})
    acted = next((e for e in events if e["kind"] == "acted"), {})
    return {
        "proposed": proposed,
        "reused_profiles": [e for e in events if e["kind"] in ("reused", "initialized")
                            and e.get("type") == PROFILE],
        # figures as the call log has them (cache-served work at its original cost)
        "syncs": account(store, story_id, [e for e in events if e["kind"] == "synchronized"]),
        # how the turn's bookmarks read their blocks: joint (one call for all), prefix
        # (a call each, the block first), single, separate (engine/joint_sync.py)
        "sync_modes": sorted({e.get("mode", "separate") for e in events
                              if e["kind"] == "synchronized" and e.get("mode") != "none"}),
        "knowledge": next((e for e in events if e["kind"] == "knowledge"), None),
        "stalls": {e["bookmark"]: e for e in events
                   if e["kind"] in ("sync_stalled", "sync_deferred")},
        "state_changes": [e for e in events if e["kind"] in ("state_refined", "state_appended")],
        # where the memory degraded instead of failing on invalid model output
        "fallbacks": [e for e in events if e["kind"] == "fallback"],
        # what card and lorebook entries did for this line, and why the others did not
        "lore": lore_report(store, turn_id, events, grounded.get("pieces", []),
                            grounded.get("text", "")),
        "grounding": grounded.get("text", ""),
        "pieces": grounded.get("pieces", []),
        "evidence": sorted({i for p in grounded.get("pieces", []) for i in p.get("evidence", [])}),
        "usage": usage,
        "actor_tries": acted.get("tries"),
        "calls": store.turn_calls(turn_id),
    }


def cost_meter(store: Store, scene_id: int, turn_id: int | None) -> dict:
    story_id = store.scene(scene_id).story_id

    def tally(events: list[dict]) -> dict:
        syncs = account(store, story_id, [e for e in events if e["kind"] == "synchronized"])
        usage = [e["memory"] for e in events if e["kind"] == "usage"]
        return {"memory_tokens": sum(u.get("prompt_tokens", 0) + u.get("completion_tokens", 0)
                                     for u in usage),
                "sync_tokens": sum(e["tokens"] for e in syncs),
                "sync_tokens_without_reuse": round(sum(e["tokens_wo"] for e in syncs)),
                "saved": round(sum(e["saved"] for e in syncs)),
                "from_cache": round(sum(e["work_tokens"] - e["tokens"] for e in syncs))}

    scene_events = store.scene_events(scene_id, ("synchronized", "usage"))
    turn_events = store.turn_events(turn_id) if turn_id else []
    return {"turn": tally(turn_events), "scene": tally(scene_events)}


def passage(store: Store, scene: SceneInfo, index: int, radius: int = 3) -> list[dict]:
    lineage = Lineage.of(store, scene.branch_id)
    return [{"index": ln.index, "character": ln.character, "text": ln.text, "focus": ln.index == index}
            for ln in lineage.lines(store, max(1, index - radius), index + radius)]


def bookmark_list(store: Store, scene: SceneInfo, *, kind: str = "", subject: str = "",
                  title: str = "", knower: str = "") -> list[dict]:
    lineage = Lineage.of(store, scene.branch_id)
    end = lineage.length(store)
    rows = []
    for space, who in memory_spaces(scene).items():
        if knower and knower != who:
            continue
        for b in visible_bookmarks(store, scene.story_id, space, lineage, end):
            rows.append((b, who))
    out = []
    for b, who in rows:
        if kind and b.type != kind:
            continue
        if subject and subject.casefold() not in b.subject.casefold():
            continue
        if title and title.casefold() not in b.title.casefold():
            continue
        out.append({"id": b.id, "type": b.type, "subject": b.subject, "title": b.title,
                    "p": b.p, "pinned": b.pinned, "knower": who})
    return sorted(out, key=lambda r: (-r["p"], r["title"]))


def bookmark_timeline(store: Store, scene: SceneInfo, bookmark_id: int) -> dict:
    """The bookmark's versions visible on this scene's lineage, oldest first, with diffs."""
    from bookmarks.memory import parse_content

    lineage = Lineage.of(store, scene.branch_id)
    flags = scoped_flags(store, [bookmark_id], lineage).get(bookmark_id, (False, ""))
    row = {**store.bookmark(bookmark_id), "pinned": int(flags[0]), "activation": flags[1]}
    versions = [v for v in store.bookmark_history(bookmark_id) if lineage.sees(v["branch_id"], v["p"])]
    out, previous = [], ""
    for v in versions:
        text = render_content(row["type"], parse_content(row["type"], v["content"]))
        diff = "\n".join(difflib.unified_diff(previous.splitlines(), text.splitlines(),
                                              lineterm="", n=0))
        out.append({"p": v["p"], "branch_id": v["branch_id"], "text": text,
                    "diff": "\n".join(diff.splitlines()[2:]), "turn_id": v["turn_id"]})
        previous = text
    return {"bookmark": row, "versions": out}


def edit_bookmark(store: Store, scene: SceneInfo, bookmark_id: int, text: str, pinned: bool) -> None:
    """The user's text becomes the bookmark's content at its current checkpoint here."""
    lineage = Lineage.of(store, scene.branch_id)
    row = store.bookmark(bookmark_id)
    current = next((b for b in visible_bookmarks(store, scene.story_id, row["space"], lineage,
                                                 lineage.length(store)) if b.id == bookmark_id), None)
    if current is None:
        raise BookmarksError("This bookmark has no version on this scene's storyline yet.")
    text = text.strip()
    if not text:
        raise ValueError("The bookmark text is empty.")
    if len(text) > 4000:
        raise ValueError("Bookmark text is limited to 4,000 characters.")
    if row["type"] == "concept":
        content = current.content.model_copy(update={"description": text})
    elif row["type"] == "state":
        nodes = list(current.content.nodes)
        start = nodes[-1].start if nodes else 1
        nodes[-1:] = [StateNode(text=text, start=start, end=max(current.p, start))]
        content = StateContent(nodes=nodes)
    elif row["type"] == PROFILE:
        content = ProfileContent(text=text, evidence=current.content.evidence)
    else:
        raise BookmarksError("Behavioral bookmarks hold story examples; pin them, but they are "
                             "not edited as text.")
    assert isinstance(content, ConceptContent | StateContent | ProfileContent)
    store.set_bookmark_content(bookmark_id, scene.branch_id, current.p, content, pinned)
