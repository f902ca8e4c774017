"""Card and lore memory at a turn, for the memory panel: every entry a character card or
lorebook put into the scene, whether it grounded the line, and if not, why — its keys
were not mentioned in the lines the engine scans, it belongs to another character's card,
or it was dropped because the grounding's token budget was used up before it.

What happened is read from the turn's events (`lore` for an entry that applied, the
grounded pieces for what the actor saw); only "no key mentioned" is worked out again, by
the same key matching (`engine.cards.matched_keys`) over the same lines.
"""

from __future__ import annotations

from bookmarks.engine.cards import matched_keys
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.recall import visible_bookmarks
from bookmarks.store import Store

SCANNED = 6  # lines the engine scans for keys (see method_bookmarks: req.scene[-6:])


def lore_report(store: Store, turn_id: int, events: list[dict], pieces: list[dict],
                grounding: str = "") -> list[dict]:
    """[{"title", "activation", "keys", "status": grounded | dropped | unused, "why"}].
    `pieces` and `grounding`: what the actor saw (a last piece cut at the token budget
    ends the text with " …")."""
    if not any(e["kind"] == "grounded" for e in events):
        return []  # a line the writer wrote, a greeting: nothing was grounded
    turn = store.turn(turn_id)
    scene = store.scene(turn.scene_id)
    space = f"story@{turn.character}" if scene.settings.get("knowledge") == "witnessed" \
        else "story"
    lineage = Lineage.of(store, scene.branch_id)
    p = turn.idx - 1
    entries = [b for b in visible_bookmarks(store, scene.story_id, space, lineage, p)
               if b.activation]
    if not entries:
        return []
    applied = {e["bookmark"] for e in events if e["kind"] == "lore"}
    synced = {e["bookmark"] for e in events if e["kind"] in ("reused", "initialized")}
    kept = {piece.get("bookmark_id") for piece in pieces}
    cut = pieces[-1].get("bookmark_id") if pieces and grounding.endswith(" …") else None
    lines = lineage.lines(store, max(1, p - SCANNED + 1), p)
    text = "\n".join(f"{ln.character} {ln.text}" for ln in lines)
    out = []
    for b in sorted(entries, key=lambda b: (b.activation != "self", b.title)):
        keys = list(getattr(b.content, "keys", []) or [])
        found = matched_keys(keys, text) if b.activation == "keys" else []
        if b.id in kept:
            status = "grounded"
            why = ("always on" if b.activation == "always"
                   else f"{b.subject} speaks" if b.activation == "self"
                   else "proposed for this line" if b.id in synced and b.id not in applied
                   else "mentioned: " + ", ".join(found or keys))
            if b.id == cut:
                why += "; cut short: the token budget was used up"
        elif b.id in applied or b.id in synced:
            status, why = "dropped", "dropped for the token budget (the grounding was full)"
        elif b.activation == "self":
            status, why = "unused", f"{b.subject}'s own: used when {b.subject} speaks"
        else:
            status = "unused"
            why = (f"no key mentioned in the last {SCANNED} lines (keys: {', '.join(keys)})"
                   if not found else "not applied")
        out.append({"bookmark": b.id, "title": b.title, "activation": b.activation,
                    "keys": keys, "status": status, "why": why})
    return out
