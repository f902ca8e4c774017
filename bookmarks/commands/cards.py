"""`bookmarks card add` and `bookmarks lore add`: SillyTavern character cards and World
Info / lorebooks from the command line, as the Play tab brings them — into a new scene
(the card's character joins its cast, its greeting opens it), into an existing scene, or
as a story's pinned memory that every scene of the story grounds on.

The memory written is the engine's (engine/cards.py): a card's concept, state and
behavioral examples, pinned, grounding whenever its character acts; each lore entry a
pinned concept grounding when one of its keys is mentioned (or always, when constant);
one copy of an entry that a card's embedded lorebook and a World Info file both carry.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bookmarks.engine.cards import attach, card_memory, lore_identity, lore_memory, unique_lore
from bookmarks.engine.grounding import MemoryWrites, VersionWrite
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.methods import METHODS
from bookmarks.engine.recall import memory_spaces, new_bookmark, visible_bookmarks
from bookmarks.errors import BookmarksError
from bookmarks.scenes.new_scene import card_cast, start_scene
from bookmarks.store import SceneInfo, Store
from bookmarks.stories.sillytavern import Card, LoreEntry
from bookmarks.stories.sillytavern_card import read_card
from bookmarks.stories.sillytavern_lorebook import read_world_info

SHARED = "story"  # the story's shared memory space; "story@NAME" is NAME's witnessed one


def _services():
    from bookmarks.services import Services

    return Services.open()


def _read(path: str, limit: int) -> tuple[bytes, str]:
    p = Path(path)
    if not p.is_file():
        raise BookmarksError(f"{path}: no such file.")
    if p.stat().st_size > limit:
        from bookmarks.stories.decoding import size_message

        raise BookmarksError(f"{p.name}: {size_message(p.stat().st_size, limit)}")
    return p.read_bytes(), p.name


def read_inputs(card_path: str | None, lore_paths: list[str], limit: int, user: str
                ) -> tuple[Card | None, list[LoreEntry], int]:
    """The card, every lore entry (the card's own book first) with one copy of each, and
    how many copies were left out. Errors name the file and the reason."""
    card = None
    if card_path:
        card = read_card(*_read(card_path, limit), user=user, max_bytes=limit)
    entries = list(card.lorebook) if card else []
    for path in lore_paths:
        data, name = _read(path, limit)
        entries += read_world_info(data, name, char=card.name if card else None, user=user,
                                   max_bytes=limit)
    unique = unique_lore(entries)
    return card, unique, len(entries) - len(unique)


def not_yet_pinned(store: Store, story_id: int, lineage: Lineage, point: int,
                   spaces: list[str], lore: list[LoreEntry]) -> tuple[list[LoreEntry], int]:
    """The entries not already pinned lore in every one of `spaces` at `point` of `lineage`
    (a story's pinned World Info that a card's lorebook repeats, say), and how many were."""
    there: set | None = None
    for space in spaces:
        found = {lore_identity(list(getattr(b.content, "keys", []) or []),
                               getattr(b.content, "description", ""))
                 for b in visible_bookmarks(store, story_id, space, lineage, point,
                                            types=("concept",))
                 if b.pinned and b.activation in ("keys", "always")}
        there = found if there is None else there & found
    kept = [e for e in lore if lore_identity(e.keys, e.content) not in (there or set())]
    return kept, len(lore) - len(kept)


def pin_to_story(store: Store, story_id: int, *, card: Card | None = None,
                 lore: list[LoreEntry] | None = None) -> tuple[int, int]:
    """Write a card's and lore entries' memory as the story's own, pinned at its start
    (trunk, point 0): every scene of the story grounds on it, omniscient or witnessed (the
    card's memory is its character's; lore goes to every knower of the cast). Returns the
    number of bookmark versions written and of entries the shared memory already held
    pinned (left out, as they are in each space that holds them)."""
    info = store.story(story_id)
    knowers = [c.name for c in store.characters(story_id)]
    if card is not None and card.name not in knowers:
        knowers.append(card.name)
    trunk = Lineage.of(store, info.trunk_id)
    lore = list(lore or [])
    known = not_yet_pinned(store, story_id, trunk, 0, [SHARED], lore)[1]
    items = []
    if card is not None:
        for kind, title, act, content in card_memory(card):
            for space in (SHARED, f"{SHARED}@{card.name}"):
                items.append((space, card.name, kind, title, act, content))
    for space in (SHARED, *(f"{SHARED}@{who}" for who in knowers)):
        fresh, _ = not_yet_pinned(store, story_id, trunk, 0, [space], lore)
        for kind, title, act, content in lore_memory(fresh):
            items.append((space, title, kind, title, act, content))
    writes = MemoryWrites()
    for space, subject, kind, title, act, content in items:
        bm = new_bookmark(story_id, space, subject, kind, title, store)
        bm.pinned, bm.activation = True, act
        if bm.id is None:
            writes.new_bookmarks.append(bm)
        else:
            store.set_bookmark_flags(bm.id, pinned=True, activation=act)
        writes.versions.append(VersionWrite(bm, info.trunk_id, 0, content))
    store.commit_memory(writes)
    return len(items), known


def new_scene(store: Store, story_id: int | None, args: argparse.Namespace, card: Card | None,
              lore: list[LoreEntry], budget: int) -> tuple[SceneInfo, int]:
    """A scene started as the Play tab starts one (`scenes.new_scene.start_scene`): at a
    story point (default: the middle), with a cast (default: the story's first two major
    characters) and the card's character, its memory attached, its greeting the first line;
    with no story, a card alone on an empty stage. Lore the story already holds pinned there
    is left out. Returns the scene and the number of entries left out so."""
    cast = [" ".join(n.split()) for n in args.cast or [] if n.strip()]
    point, known = None, 0
    if story_id is not None:
        info = store.story(story_id)
        chars = store.characters(story_id)
        names = {c.name.casefold(): c.name for c in chars}
        cast = [names.get(n.casefold(), n) for n in cast]
        if args.cast is None:
            cast = [c.name for c in chars if c.major][:2] or [c.name for c in chars][:2]
        point = info.n_actions // 2 if args.at is None else args.at
        if not 0 <= point <= info.n_actions:
            raise BookmarksError(f"--at: the story point must be between 0 and {info.n_actions}.")
        members = card_cast(card, cast, empty=info.n_actions == 0)
        if len(members) < 2:
            raise BookmarksError("A scene needs at least two characters: name them with --cast.")
        spaces = [f"{SHARED}@{who}" for who in members] if args.knowledge == "witnessed" \
            else [SHARED]
        lore, known = not_yet_pinned(store, story_id, Lineage.of(store, info.trunk_id), point,
                                     spaces, lore)
    bookless = card.model_copy(update={"lorebook": []}) if card is not None else None
    scene = start_scene(store, story_id=story_id, point=point, cast=cast,
                        setting=args.setting, method=args.method, card=bookless, lore=lore,
                        settings={"budget": budget, "order": "round-robin",
                                  "knowledge": args.knowledge})
    return store.scene(scene.id), known


def attach_new(store: Store, scene: SceneInfo, card: Card | None, lore: list[LoreEntry]
               ) -> tuple[int, int]:
    """`attach`, leaving out lore the scene's memory already holds pinned (the story's
    pinned World Info that a card's lorebook repeats, say): the bookmarks written and the
    entries left out."""
    lineage = Lineage.of(store, scene.branch_id)
    lore, known = not_yet_pinned(store, scene.story_id, lineage, lineage.length(store),
                                 list(memory_spaces(scene)), lore)
    written = attach(store, scene.id, card=card, lore=lore) if card is not None or lore else 0
    return written, known


def _summary(card: Card | None, lore: list[LoreEntry], dropped: int, pinned: int = 0) -> str:
    parts = []
    if card is not None:
        parts.append(f"{card.name}'s card ({len(card_memory(card))} memories)")
    enabled = sum(e.enabled for e in lore)
    if lore:
        parts.append(f"{enabled} lore entries" + (f" ({len(lore) - enabled} disabled left out)"
                                                   if enabled < len(lore) else ""))
    if dropped:
        parts.append(f"{dropped} duplicate {'entry' if dropped == 1 else 'entries'} left out")
    if pinned:
        parts.append(f"{pinned} already in its memory")
    return "; ".join(parts) or "nothing"


def cmd_add(args: argparse.Namespace) -> int:
    services = _services()
    store = services.store
    limit = services.settings.max_upload_bytes
    card_path = args.file if args.what == "card" else None
    lore_paths = list(args.lore or []) if args.what == "card" else list(args.files)
    card, lore, dropped = read_inputs(card_path, lore_paths, limit, args.user)
    if card is None and not lore:
        raise BookmarksError(f"{', '.join(lore_paths)}: no lore entries to add.")
    if args.scene is None and args.story is None and (card is None or args.pin):
        raise BookmarksError("Give --story ID (or --scene ID).")
    if args.scene is not None:
        scene = store.scene(args.scene)
        if args.story is not None and args.story != scene.story_id:
            raise BookmarksError(f"Scene {scene.id} belongs to story {scene.story_id}, not "
                                 f"{args.story}.")
        if card is not None and card.name not in scene.cast:
            raise BookmarksError(f"Scene {scene.id}'s cast ({', '.join(scene.cast)}) has no "
                                 f"{card.name}: start a new scene with the card (leave out "
                                 "--scene).")
        n, known = attach_new(store, scene, card, lore)
        print(f"Added to scene {scene.id} ({scene.title!r}): "
              f"{_summary(card, lore, dropped, known)}; {n} pinned memories.")
        return 0
    if args.story is None:  # a card alone: a scene on an empty stage, as in the Play tab
        scene, _ = new_scene(store, None, args, card, lore, services.settings.budget)
        print(f"Scene {scene.id} ({scene.title!r}), cast {', '.join(scene.cast)}: "
              f"{_summary(card, lore, dropped)}. Play it in the web app (bookmarks serve).")
        return 0
    info = store.story(args.story)
    if args.pin:
        n, known = pin_to_story(store, info.id, card=card, lore=lore)
        print(f"Pinned to story {info.id} ({info.title!r}): "
              f"{_summary(card, lore, dropped, known)}; {n} memory versions "
              "(shared and each character's own). Every scene of the story grounds on them.")
        return 0
    scene, known = new_scene(store, info.id, args, card, lore, services.settings.budget)
    print(f"Scene {scene.id} ({scene.title!r}) from action {scene.start_point} of story "
          f"{info.id}, cast {', '.join(scene.cast)}: {_summary(card, lore, dropped, known)}. "
          "Play it in the web app "
          f"(bookmarks serve) or export it: bookmarks export --scene {scene.id}")
    return 0


def add_parsers(sub) -> None:
    """`card add` and `lore add` under the `bookmarks` command's subparsers."""
    for what, blurb in (("card", "a SillyTavern character card (.png or .json)"),
                        ("lore", "SillyTavern World Info / lorebook files (.json)")):
        p = sub.add_parser(what, help=f"bring {blurb} into a scene or a story's memory")
        actions = p.add_subparsers(dest=f"{what}_command", required=True)
        q = actions.add_parser("add", help=f"add {blurb}: into a new scene (default), an "
                                           "existing one (--scene) or the story's pinned "
                                           "memory (--pin)")
        if what == "card":
            q.add_argument("file", help="the card")
            q.add_argument("--lore", action="append", metavar="FILE",
                           help="a World Info file to add with it (repeatable)")
        else:
            q.add_argument("files", nargs="+", metavar="FILE", help="World Info files")
        q.add_argument("--story", type=int, help="story id (see: bookmarks list); a card "
                                                 "without one starts a scene on an empty stage")
        where = q.add_mutually_exclusive_group()
        where.add_argument("--scene", type=int, help="add to this existing scene")
        where.add_argument("--pin", action="store_true",
                           help="pin to the story's own memory: every scene grounds on it")
        q.add_argument("--at", type=int, help="new scene: story point (default: the middle)")
        q.add_argument("--cast", action="append", metavar="NAME",
                       help="new scene: a character (repeatable; default: the first two major "
                            "ones, and the card's)")
        q.add_argument("--setting", default="", help="new scene: where and when")
        q.add_argument("--method", default="bookmarks", choices=list(METHODS))
        q.add_argument("--knowledge", choices=("omniscient", "witnessed"), default="omniscient")
        q.add_argument("--user", default="User", help="the name {{user}} stands for")
        q.set_defaults(func=cmd_add, what=what)
