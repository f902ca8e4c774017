"""Starting a scene: at a point of a story with a cast, optionally with a SillyTavern
character card and lorebook; or from a card alone, on an empty stage.

An empty stage is a story with no actions (one per database, made on first use): the
card's character plays there with the writer, grounded on the card's own memory and its
lorebook only. Nothing else about such a scene is special: it is a branch of that story
like any other, so undo, fork, export and the memory panel work as everywhere.
"""

from __future__ import annotations

from bookmarks.engine.cards import attach
from bookmarks.errors import BookmarksError
from bookmarks.store import SceneInfo, Store
from bookmarks.stories.sillytavern import Card, LoreEntry
from bookmarks.stories.story import Story

EMPTY_STAGE = "Empty stage"
YOU = "You"  # the writer's own character on an empty stage, unless they name one


def empty_stage(store: Store) -> int:
    """The id of the story with no actions that card-only scenes play on."""
    found = store.find_story(EMPTY_STAGE)
    if found is not None and found.n_actions == 0:
        return found.id
    return store.add_story(Story(
        title=EMPTY_STAGE, source_format="stage", characters=[], actions=[],
        description="No story: scenes started from a character card alone play here."))


def card_cast(card: Card | None, cast: list[str], *, own: str = "",
              empty: bool = False) -> list[str]:
    """The cast a scene starts with: the chosen characters, the writer's own, the card's
    character; on an empty stage someone for the writer to be ("You") when the card's
    character would otherwise be alone."""
    members: list[str] = []
    for name in [*cast, own, card.name if card else ""]:
        name = " ".join((name or "").split())
        if name and name not in members:
            members.append(name)
    if empty and len(members) < 2:
        members.append(YOU)
    return members


def start_scene(store: Store, *, story_id: int | None, point: int | None, cast: list[str],
                own: str = "", setting: str = "", method: str = "bookmarks",
                settings: dict | None = None, you: str | None = None,
                card: Card | None = None, lore: list[LoreEntry] | None = None) -> SceneInfo:
    """Create the scene, write the card's and lorebook's memory into it and open it with
    the card's greeting. `story_id` None: a card alone starts a scene on the empty stage.
    `you`: the character the writer plays (None: the model plays everyone)."""
    title = ""
    if story_id is None:
        if card is None:
            raise BookmarksError("Choose a story first — or bring a character card: a card "
                                 "starts a scene by itself, on an empty stage.")
        story_id, point, title = empty_stage(store), 0, f"{card.name} — on an empty stage"
    info = store.story(story_id)
    members = card_cast(card, list(cast or []), own=own, empty=info.n_actions == 0)
    if len(members) < 2:
        raise BookmarksError("Choose at least two characters for the cast.")
    p = info.n_actions if point is None else int(point)
    if not 0 <= p <= info.n_actions:
        raise BookmarksError(f"The story point must be between 0 and {info.n_actions}.")
    scene = store.create_scene(story_id, start_point=p, cast=members, setting=setting.strip(),
                               method=method, title=title,
                               settings={**(settings or {}),
                                         "you": you if you in members else None})
    entries = [*(card.lorebook if card else []), *(lore or [])]
    if card is not None or entries:
        attach(store, scene.id, card=card, lore=entries)
    if card is not None and card.first_message.strip():  # the card's greeting opens
        store.add_turn(scene.id, character=card.name, text=card.first_message.strip()[:2000],
                       source="card")
    return scene
