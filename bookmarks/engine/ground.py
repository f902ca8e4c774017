"""Grounding one prediction at a story point: the engine's single entry point for Play,
background preparation, `prepare`, walks and evaluation.

`ground_at` builds the scene window (omniscient, or only what the character witnessed),
makes the method's grounder and returns its grounding; `chosen_characters` resolves the
characters a run or a preparation is about.
"""

from __future__ import annotations

from bookmarks.engine.grounding import Grounding, GroundRequest
from bookmarks.engine.lineage import IndexedLine, Lineage
from bookmarks.engine.method_bookmarks import BookmarksOptions
from bookmarks.engine.methods import make_grounder
from bookmarks.engine.sync import SyncOptions
from bookmarks.errors import BookmarksError, NotFoundError
from bookmarks.models.llm import LLM
from bookmarks.store import Store
from bookmarks.stories.presence import Witness

OMNISCIENT, WITNESSED = "omniscient", "witnessed"
KNOWLEDGE_MODES = (OMNISCIENT, WITNESSED)


def chosen_characters(store: Store, story_id: int, wanted: list[str] | None) -> list[str]:
    """Canonical names for the characters asked for (by name or alias), in order; by
    default the story's major characters (or the whole cast when none is major)."""
    cast = store.characters(story_id)
    if not wanted:
        return [c.name for c in cast if c.major] or [c.name for c in cast]
    names: list[str] = []
    for name in wanted:
        match = next((c for c in cast if name.casefold() in {k.casefold() for k in c.keys()}), None)
        if match is None:
            raise NotFoundError(f"The story has no character named {name!r}; its cast is "
                                f"{', '.join(c.name for c in cast)}.")
        if match.name not in names:
            names.append(match.name)
    return names


async def ground_at(store: Store, memory: LLM, *, story_id: int, lineage: Lineage,
                    position: int, character: str, method: str, budget: int = 3,
                    space: str = "story", window: int = 10, state_block: int = 64,
                    scene_id: int | None = None, capacity: int | None = None,
                    extra_scene: list[IndexedLine] | None = None,
                    scene_cast: list[str] | None = None, max_read: int = 0,
                    knowledge: str = OMNISCIENT,
                    ) -> tuple[Grounding, list[IndexedLine]]:
    """Ground the prediction of action `position` by `character` on a lineage.
    `extra_scene` lines (e.g. a question) are shown to the grounder after the scene.

    `knowledge="witnessed"`: only what `character` could perceive reaches the grounding —
    the scene window, every synchronization and every prompt see only the actions they
    were present for (see presence.py); their memory is their own (space `…@character`:
    the knower is part of a bookmark's identity)."""
    req = request_at(store, story_id=story_id, lineage=lineage, position=position,
                     character=character, budget=budget, space=space, window=window,
                     scene_id=scene_id, extra_scene=extra_scene, scene_cast=scene_cast,
                     knowledge=knowledge)
    grounder = make_grounder(method, store, memory, budget=budget, capacity=capacity,
                             options=BookmarksOptions(sync=SyncOptions(state_block=state_block),
                                                      max_read=max_read))
    grounding = await grounder.ground(req)
    if req.witness is not None:
        grounding.events.insert(0, {"kind": "knowledge", "mode": WITNESSED, "knower": character,
                                    "unseen": req.witness.unseen(1, position - 1)})
    return grounding, req.scene[:len(req.scene) - len(extra_scene or [])]


def request_at(store: Store, *, story_id: int, lineage: Lineage, position: int, character: str,
               budget: int = 3, space: str = "story", window: int = 10,
               scene_id: int | None = None, extra_scene: list[IndexedLine] | None = None,
               scene_cast: list[str] | None = None, knowledge: str = OMNISCIENT) -> GroundRequest:
    """The request grounding the prediction of action `position` by `character` (see
    `ground_at`): its scene window, and in witnessed mode its knower's memory and filter."""
    if knowledge not in KNOWLEDGE_MODES:
        raise BookmarksError(f"Knowledge mode is one of {', '.join(KNOWLEDGE_MODES)}, "
                             f"not {knowledge!r}.")
    story = store.story(story_id)
    witness = None
    if knowledge == WITNESSED:
        witness = Witness(character, store.presence(story_id).get(character, []),
                          lineage.cutoffs[lineage.trunk_id], scene_cast or [])
        space = f"{space}@{character}"
        scene = witness.filter(lineage.lines(store, max(1, position - 8 * window),
                                             position - 1))[-window:]
    else:
        scene = lineage.lines(store, max(1, position - window), position - 1)
    cast = [c.name for c in store.characters(story_id)]
    return GroundRequest(story_id=story_id, story_title=story.title, lineage=lineage,
                         position=position, character=character,
                         scene=scene + list(extra_scene or []), cast=cast,
                         space=space, budget=budget, scene_id=scene_id,
                         scene_cast=list(scene_cast or []), witness=witness)
