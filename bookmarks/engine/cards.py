"""SillyTavern character cards and lorebooks as scene memory, and a scene's memory back
out as a World Info file.

A card brought into a scene becomes a character of the writer's own with pinned memory
the engine grounds on whenever that character acts: a concept (description and
personality), a state (the scenario) and behavioral examples (the example dialogue).
Each lorebook or World Info entry becomes a pinned concept bookmark whose keys are its
mention keys; it grounds a turn when one of its keys is mentioned in the scene (or
always, for a constant entry), as World Info does, and later synchronizations add to its
text without dropping it. Everything is written as versions on the scene's own branch at
its start point: other scenes and the story's shared memory are untouched.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from bookmarks.engine.grounding import MemoryWrites, VersionWrite
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.recall import memory_spaces, new_bookmark, visible_bookmarks
from bookmarks.memory import (
    BehavioralContent,
    BehavioralExample,
    Bookmark,
    ConceptContent,
    StateContent,
    StateNode,
    render_content,
)
from bookmarks.store import Store
from bookmarks.stories.sillytavern import Card, LoreEntry
from bookmarks.stories.sillytavern_lorebook import bookmark_entries, world_info_json


def card_memory(card: Card) -> list[tuple[str, str, str, BaseModel]]:
    """(type, title, activation, content) of a card's own memory."""
    name = card.name
    keys = [name, *([card.nickname] if card.nickname and card.nickname != name else [])]
    out: list[tuple[str, str, str, BaseModel]] = []
    about = "\n".join(t for t in (card.description.strip(), card.personality.strip()) if t)
    if about:
        out.append(("concept", f"Who {name} is", "self",
                    ConceptContent(description=about[:4000], keys=keys)))
    if card.scenario.strip():
        out.append(("state", f"{name}'s situation", "self",
                    StateContent(nodes=[StateNode(text=card.scenario.strip()[:2000], start=0, end=0)])))
    examples = []
    for block in card.examples:
        previous = "(start)"
        for speaker, text in block:
            if speaker == name and text.strip():
                examples.append(BehavioralExample(index=0, action=text.strip()[:600],
                                                  scene=previous[:160], why="card example"))
            previous = f"{speaker}: {text}"
    if examples:
        out.append(("behavioral", f"How {name} speaks", "self",
                    BehavioralContent(examples=examples[:32])))
    return out


def lore_identity(keys: list[str], content: str) -> tuple[frozenset[str], str]:
    """What makes two lore entries (or an entry and a lore bookmark) the same: their keys,
    whatever their case and order, and their content as written to memory, whatever its
    spacing."""
    return frozenset(k.casefold() for k in keys), " ".join(content.strip()[:4000].split())


def unique_lore(entries: list[LoreEntry]) -> list[LoreEntry]:
    """One copy of each lore entry, in order: a card's embedded lorebook and a World Info
    file made from it (or two files) carry the same entry — the same keys, whatever their
    case and order, and the same content, whatever its spacing. The copy kept is the first;
    it is enabled or constant if any copy is."""
    kept: dict[tuple[frozenset[str], str], LoreEntry] = {}
    for e in entries:
        same = lore_identity(e.keys, e.content)
        if (first := kept.get(same)) is None:
            kept[same] = e
        elif (e.enabled and not first.enabled) or (e.constant and not first.constant):
            kept[same] = first.model_copy(update={"enabled": first.enabled or e.enabled,
                                                  "constant": first.constant or e.constant})
    return list(kept.values())


def lore_memory(entries: list[LoreEntry]) -> list[tuple[str, str, str, BaseModel]]:
    """(type, title, activation, content) of each enabled lore entry (one copy of each)."""
    return [("concept", e.title[:200], "always" if e.constant else "keys",
             ConceptContent(description=e.content.strip()[:4000], keys=list(e.keys)))
            for e in unique_lore(entries) if e.enabled]


def attach(store: Store, scene_id: int, *, card: Card | None = None,
           lore: list[LoreEntry] | None = None) -> int:
    """Write a card's and lorebook entries' memory into a scene (one transaction); returns
    the number of bookmarks written. With witnessed knowledge, the card's memory is its
    character's own and lore goes to every knower of the cast."""
    scene = store.scene(scene_id)
    spaces = memory_spaces(scene)
    items: list[tuple[str, str, str, str, BaseModel]] = []  # space, type, title, act., content
    if card is not None:
        own = next((s for s, who in spaces.items() if who == card.name), None)
        for kind, title, act, content in card_memory(card):
            for space in [own] if own else list(spaces):
                items.append((space, kind, title, act, content))
    for kind, title, act, content in lore_memory(list(lore or [])):
        for space in spaces:
            items.append((space, kind, title, act, content))
    writes = MemoryWrites()
    with store.transaction():  # pins and activations are this scene's own, never the story's
        for space, kind, title, act, content in items:
            subject = card.name if card is not None and act == "self" else title
            bm = new_bookmark(scene.story_id, space, subject, kind, title, store)
            bm.pinned, bm.activation = True, act
            if bm.id is None:
                writes.new_bookmarks.append(bm)
            else:
                store.set_bookmark_flags(bm.id, pinned=True, activation=act,
                                         branch_id=scene.branch_id)
            writes.versions.append(VersionWrite(bm, scene.branch_id, scene.start_point, content))
        store.commit_memory(writes, changes=scene.branch_id)  # memory read here changed
    return len(items)


def detach(store: Store, scene_id: int, *, card: str | None = None, lore: bool = False) -> int:
    """Take a card's own memory (`card`: its character's name) and/or the lorebook entries
    (`lore`) back out of a scene: what `attach` wrote there goes, the story's memory shows
    through again. A change of what memory reads: background work for the scene stops.
    Returns the number of bookmarks taken out."""
    scene = store.scene(scene_id)
    rows = {r["id"]: r for space in memory_spaces(scene)
            for r in store.bookmarks(scene.story_id, space)}
    ids = [o["bookmark_id"] for o in store.branch_overrides(scene.branch_id)
           if o["bookmark_id"] in rows and (
               (o["activation"] == "self" and card is not None
                and rows[o["bookmark_id"]]["subject"] == card)
               or (lore and o["activation"] in ("keys", "always")))]
    store.drop_branch_memory(scene.branch_id, ids, scene.start_point)
    return len(ids)


_WORD = re.compile(r"\w+(?:['’]\w+)*")


def _forms(word: str) -> frozenset[str]:
    """A word and its possible singular forms (beasts → beast, lenses → lens, stories →
    story, wolves → wolf or wolfe, Shadowfang's → shadowfang), case-folded: a key's word
    and the scene's match when they share a form."""
    w = word.casefold().removesuffix("'s").removesuffix("’s")
    forms = {w}
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        forms.add(w[:-1])
        if w.endswith("es"):
            forms.add(w[:-2])
        if w.endswith("ies"):
            forms.add(w[:-3] + "y")
        if w.endswith("ves"):
            forms |= {w[:-3] + "f", w[:-3] + "fe"}
    return frozenset(forms)


def _words(text: str) -> list[frozenset[str]]:
    return [_forms(w) for w in _WORD.findall(text)]


def matched_keys(keys: list[str], text: str) -> list[str]:
    """The keys mentioned in `text`, as World Info matches them: case-insensitive, whole
    words, a key of several words as those words in a row, singular and plural alike
    ("Shadowfang beasts" mentions the keys "shadowfang", "beast" and "Shadowfang Beast")."""
    words = _words(text)
    found = []
    for key in keys:
        want = _words(key)
        n = len(want)
        if n and any(all(words[i + j] & want[j] for j in range(n))
                     for i in range(len(words) - n + 1)):
            found.append(key)
    return found


def active(bm: Bookmark, character: str, scene_text: str) -> bool:
    """Does a card or lore bookmark ground this turn without being proposed?"""
    if bm.activation == "always":
        return True
    if bm.activation == "self":
        return bm.subject == character
    if bm.activation == "keys":
        return bool(matched_keys(list(getattr(bm.content, "keys", []) or []), scene_text))
    return False


def world_info_for(store: Store, story_id: int, *, scene_id: int | None = None,
                   name: str = "") -> str:
    """What the memory learned, as a SillyTavern World Info file: concepts and states,
    keyed by their subject and its aliases (the story's shared memory, or a scene's)."""
    cast = {c.name: c.keys() for c in store.characters(story_id)}
    if scene_id is not None:
        scene = store.scene(scene_id)
        lineage = Lineage.of(store, scene.branch_id)
        spaces = list(memory_spaces(scene))
    else:
        lineage = Lineage.of(store, store.story(story_id).trunk_id)
        spaces = ["story"]
    end = lineage.length(store)
    rows = []
    for space in spaces:
        for b in visible_bookmarks(store, story_id, space, lineage, end, types=("concept", "state")):
            text = render_content(b.type, b.content).strip()
            keys = cast.get(b.subject) or list(getattr(b.content, "keys", []) or []) or [b.subject]
            rows.append((b.type, b.title, text, keys))
    return world_info_json(bookmark_entries(rows), name or store.story(story_id).title)
