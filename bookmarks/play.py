"""Scenes: a branch of a story started at a story point, extended turn by turn.

`scene_window` gives the lines the actor sees (trunk actions before the start point,
then the scene's own turns); `generate_turn` asks the actor for a character's next line
and stores it, with its events, in one transaction.
"""

from __future__ import annotations

from .actor import Line, act
from .errors import NotFoundError
from .llm import LLM
from .store import SceneInfo, Store, Turn
from .story import NARRATION


def scene_window(store: Store, scene: SceneInfo, window: int = 10) -> list[Line]:
    turns = store.turns(scene.id)
    need = max(0, window - len(turns))
    trunk = store.actions(scene.story_id, max(1, scene.start_point - need + 1),
                          scene.start_point) if need else []
    lines = [Line(a.character, a.text) for a in trunk] + [Line(t.character, t.text)
                                                          for t in turns]
    return lines[-window:] if window else lines


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


async def generate_turn(store: Store, actor: LLM, scene_id: int, character: str,
                        *, window: int = 10) -> Turn:
    """Vanilla grounding: the actor sees the recent scene only."""
    scene = store.scene(scene_id)
    story = store.story(scene.story_id)
    name, aliases = _check_character(store, scene, character)
    lines = scene_window(store, scene, window)
    others = [c.name for c in store.characters(scene.story_id) if c.name != name]
    result = await act(actor, story_title=story.title, character=name, scene=lines,
                       setting=scene.setting, aliases=aliases, others=others + scene.cast,
                       scene_id=scene_id)
    events = [
        {"kind": "grounded", "method": "vanilla", "text": "", "evidence": []},
        {"kind": "acted", "tries": result.tries,
         "rejected": [{"reply": r[:300], "reason": why} for r, why in result.rejected]},
    ]
    return store.add_turn(scene_id, character=name, text=result.text, source="model",
                          method="vanilla", events=events)
