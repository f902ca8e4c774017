"""Scenes: a branch of a story started at a story point, extended turn by turn.

`generate_turn` grounds the next action with the scene's method (Bookmarks or a
baseline), asks the actor for the character's line, and commits the turn, its events and
all memory writes in one transaction — a model error anywhere before that leaves the
database as it was.
"""

from __future__ import annotations

from .actor import Line, act
from .errors import NotFoundError
from .grounding import Grounding, GroundRequest
from .lineage import IndexedLine, Lineage
from .llm import LLM
from .methods import make_grounder
from .store import SceneInfo, Store, Turn
from .story import NARRATION


def scene_window(store: Store, scene: SceneInfo, window: int = 10) -> list[IndexedLine]:
    """The last `window` lines of the scene's storyline (trunk, then its turns)."""
    lineage = Lineage.of(store, scene.branch_id)
    end = lineage.length(store)
    return lineage.lines(store, max(1, end - window + 1), end)


def _check_character(store: Store, scene: SceneInfo, character: str) -> tuple[str, list[str]]:
    """Canonical name and aliases of a cast member (or a user's own new character)."""
    for c in store.characters(scene.story_id):
        if character.casefold() in {k.casefold() for k in c.keys()}:
            return c.name, c.aliases
    if character in scene.cast or character == NARRATION:
        return character, []
    raise NotFoundError(f"{character!r} is not a character of this story or scene.")


def add_user_turn(store: Store, scene_id: int, character: str, text: str) -> Turn:
    store.scene(scene_id)  # raises NotFoundError for an unknown scene
    text = text.strip()
    if not text:
        raise ValueError("The line is empty.")
    name = character.strip() or NARRATION
    return store.add_turn(scene_id, character=name, text=text[:2000], source="user")


async def ground_at(store: Store, memory: LLM, *, story_id: int, lineage: Lineage,
                    position: int, character: str, method: str, budget: int = 3,
                    space: str = "story", window: int = 10,
                    scene_id: int | None = None) -> tuple[Grounding, list[IndexedLine]]:
    """Ground the prediction of action `position` by `character` on a lineage."""
    story = store.story(story_id)
    scene = lineage.lines(store, max(1, position - window), position - 1)
    cast = [c.name for c in store.characters(story_id)]
    grounder = make_grounder(method, store, memory, budget=budget)
    req = GroundRequest(story_id=story_id, story_title=story.title, lineage=lineage,
                        position=position, character=character, scene=scene, cast=cast,
                        space=space, budget=budget, scene_id=scene_id)
    return await grounder.ground(req), scene


async def generate_turn(store: Store, llms: dict[str, LLM], scene_id: int, character: str, *,
                        method: str | None = None, budget: int = 3, window: int = 10) -> Turn:
    scene = store.scene(scene_id)
    story = store.story(scene.story_id)
    name, aliases = _check_character(store, scene, character)
    lineage = Lineage.of(store, scene.branch_id)
    position = lineage.length(store) + 1
    method = method or scene.method or "vanilla"
    grounding, lines = await ground_at(store, llms["memory"], story_id=scene.story_id,
                                       lineage=lineage, position=position, character=name,
                                       method=method, budget=budget, window=window,
                                       scene_id=scene_id)
    others = [c.name for c in store.characters(scene.story_id) if c.name != name]
    result = await act(llms["actor"], story_title=story.title, character=name,
                       scene=[Line(x.character, x.text) for x in lines],
                       grounding=grounding.text, setting=scene.setting, aliases=aliases,
                       others=others + scene.cast, scene_id=scene_id)
    events = [*grounding.events,
              {"kind": "acted", "tries": result.tries,
               "rejected": [{"reply": r[:300], "reason": why} for r, why in result.rejected]},
              {"kind": "usage", "memory": grounding.usage}]
    turn = store.commit_memory(grounding.writes, scene_id=scene_id,
                               turn={"character": name, "text": result.text, "source": "model",
                                     "method": method}, events=events)
    assert turn is not None
    return turn
