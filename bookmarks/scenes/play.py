"""Scenes: a branch of a story started at a story point, extended turn by turn.

`generate_turn` grounds the next action with the scene's method (Bookmarks or a
baseline), asks the actor for the character's line, and commits the turn, its events and
all memory writes in one transaction — a model error anywhere before that leaves the
database as it was.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from bookmarks.engine.actor import Line, act, fallback_event
from bookmarks.engine.ground import OMNISCIENT, ground_at
from bookmarks.engine.grounding import Grounding
from bookmarks.engine.lineage import IndexedLine, Lineage
from bookmarks.engine.progress import watch
from bookmarks.engine.prompts import clip
from bookmarks.errors import NotFoundError, StructuredOutputError
from bookmarks.models.llm import LLM, scene_scope
from bookmarks.store import SceneInfo, Store, Turn
from bookmarks.stories.story import NARRATION

log = logging.getLogger(__name__)


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




def play_memory(memory: LLM) -> LLM:
    """The memory model as Play uses it: a turn's figures are what it spent; work the reply
    cache served is told apart by the panel, at what it first cost (`sync_account`)."""
    return dataclasses.replace(memory, count_cached=False)


@dataclass
class Prepared:
    """Grounding made ahead of a step (branch, position, character, method, budget, epoch),
    its memory writes already committed."""

    step: tuple
    grounding: Grounding
    scene: list[IndexedLine]
    seconds: float = 0.0




async def generate_turn(store: Store, llms: dict[str, LLM], scene_id: int, character: str, *,
                        method: str | None = None, budget: int = 3, window: int = 10,
                        state_block: int = 64, replace: Turn | None = None,
                        on_text: Callable[[str], None] | None = None,
                        prepared: Prepared | None = None, max_read: int = 0,
                        stand_in: bool = True) -> Turn:
    """Ground and act for `character`'s next line, and commit the turn with its memory.
    `stand_in=False`: no stand-in line when the actor gives none (NoUsableLineError).

    `prepared`: memory grounded ahead in the background (see `background.py`) for this
    very step; its writes are already committed, so only the actor is called. The turn
    commits only if no line was undone or edited meanwhile (StaleMemoryError). `max_read`:
    answer with the memory that is ready when a bookmark would read more than this many
    actions (partial memory; see `BookmarksOptions.max_read`)."""
    scene_scope.set(scene_id)  # every model call of this turn is logged with the scene
    watch(scene_id)  # and its synchronization progress is shown while it waits
    scene = store.scene(scene_id)
    story = store.story(scene.story_id)
    name, aliases = _check_character(store, scene, character)
    epoch = store.branch_epoch(scene.branch_id)
    lineage = Lineage.of(store, scene.branch_id)
    position = replace.idx if replace else lineage.length(store) + 1
    method = method or scene.method or "vanilla"
    step = (scene.branch_id, position, name, method, budget, epoch)
    if prepared is not None and prepared.step == step and not replace:
        grounding, lines = prepared.grounding, prepared.scene
        grounding.events = [*grounding.events,
                            {"kind": "prepared", "seconds": round(prepared.seconds, 2)}]
    else:
        grounding, lines = await ground_at(store, play_memory(llms["memory"]),
                                           story_id=scene.story_id,
                                           lineage=lineage, position=position, character=name,
                                           method=method, budget=budget, window=window,
                                           state_block=state_block, scene_id=scene_id,
                                           scene_cast=scene.cast, max_read=max_read,
                                           knowledge=scene.settings.get("knowledge", OMNISCIENT))
    others = [c.name for c in store.characters(scene.story_id) if c.name != name]
    result = await act(llms["actor"], story_title=story.title, character=name,
                       scene=[Line(x.character, clip(x.text)) for x in lines],  # marked cuts
                       grounding=grounding.text, setting=scene.setting, aliases=aliases,
                       others=others + scene.cast, scene_id=scene_id, on_text=on_text,
                       stand_in=stand_in)
    events = [*grounding.events, *([fallback_event(result)] if result.fallback else []),
              {"kind": "acted", "tries": result.tries,
               "rejected": [{"reply": r[:300], "reason": why} for r, why in result.rejected]},
              {"kind": "usage", "memory": grounding.usage}]
    turn = store.commit_memory(grounding.writes, scene_id=scene_id,
                               replace_turn_id=replace.id if replace else None,
                               turn={"character": name, "text": result.text, "source": "model",
                                     "method": method}, events=events,
                               expect_epoch=(scene.branch_id, epoch))
    assert turn is not None
    return turn


def speakers(scene: SceneInfo, user_character: str | None = None) -> list[str]:
    """Who the model may speak as: the cast, less the character the user plays."""
    return [c for c in scene.cast if c != user_character] or list(scene.cast)


def round_robin(store: Store, scene: SceneInfo, user_character: str | None = None) -> str:
    options = speakers(scene, user_character)
    last = scene_window(store, scene, window=len(scene.cast) * 2 + 2)
    for line in reversed(last):
        if line.character in options:
            return options[(options.index(line.character) + 1) % len(options)]
    return options[0]


class SpeakerChoice(BaseModel):
    speaker: str


def fallback_speaker(store: Store, scene: SceneInfo, user_character: str | None = None) -> str:
    """A deterministic next speaker: round-robin over the characters present, never the
    user's character nor (when anyone else is present) the one who just spoke."""
    options = speakers(scene, user_character)
    pick = round_robin(store, scene, user_character)
    last = scene_window(store, scene, window=1)
    if len(options) > 1 and last and pick == last[-1].character:
        pick = options[(options.index(pick) + 1) % len(options)]
    return pick


async def choose_speaker(store: Store, memory: LLM, scene: SceneInfo,
                         user_character: str | None = None,
                         events: list[dict] | None = None) -> str:
    """Let the memory model pick who speaks next (validated against the cast). A choice
    still invalid after its re-ask never fails the turn: the deterministic round-robin
    speaker stands in, recorded as a `fallback` event in `events` (and the log)."""
    options = speakers(scene, user_character)
    if len(options) == 1:
        return options[0]
    lines = scene_window(store, scene)
    prompt = [{"role": "user", "content":
               "The scene so far:\n" + "\n".join(f"{x.character}: {x.text}" for x in lines)
               + f"\n\nWho speaks next? Choose one of: {', '.join(options)}."}]

    def check(choice: SpeakerChoice) -> None:
        if choice.speaker not in options:
            raise ValueError(f"speaker must be one of {', '.join(options)}")

    try:
        choice = await memory.structured(prompt, SpeakerChoice, purpose="next-speaker",
                                         check=check, scene_id=scene.id, max_tokens=30)
    except StructuredOutputError as exc:
        pick = fallback_speaker(store, scene, user_character)
        log.warning("next speaker of scene %s: %s; round-robin chose %s", scene.id, exc, pick)
        if events is not None:
            events.append({"kind": "fallback", "step": "next-speaker",
                           "outcome": f"round-robin: {pick}", "reason": str(exc)[:300]})
        return pick
    return choice.speaker


def undo_last(store: Store, scene_id: int) -> Turn | None:
    """Remove the scene's last turn; returns it (None when the scene has no turn)."""
    turns = store.turns(scene_id)
    if not turns:
        return None
    store.delete_turn(turns[-1].id)
    return turns[-1]


async def regenerate_last(store: Store, llms: dict[str, LLM], scene_id: int, *,
                          budget: int = 3, window: int = 10, state_block: int = 64,
                          on_text: Callable[[str], None] | None = None) -> Turn:
    """Replace the scene's last model turn by a new sample for the same character; the
    old line stays until the new one is committed (in the same transaction)."""
    turns = store.turns(scene_id)
    if not turns or turns[-1].source != "model":
        raise ValueError("The last line is not the model's; there is nothing to regenerate.")
    last = turns[-1]
    return await generate_turn(store, llms, scene_id, last.character, method=last.method,
                               budget=budget, window=window, state_block=state_block,
                               replace=last, on_text=on_text)


def fork_at(store: Store, scene_id: int, turn_id: int | None = None) -> SceneInfo:
    """A new scene continuing from turn `turn_id` (default: the last turn)."""
    scene = store.scene(scene_id)
    lineage = Lineage.of(store, scene.branch_id)
    if turn_id is None:
        return store.fork_scene(scene_id, lineage.length(store))
    turn = store.turn(turn_id)
    if not lineage.sees(turn.branch_id, turn.idx):
        raise ValueError("That line is not part of this scene.")
    return store.fork_scene(scene_id, turn.idx)
