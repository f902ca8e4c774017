"""Shared set-up for engine tests: a generated story and a scripted memory model."""

from __future__ import annotations

from bookmarks.engine.ground import ground_at
from bookmarks.engine.lineage import Lineage
from bookmarks.memory import resolve_refs
from bookmarks.models.llm import run_sync
from bookmarks.stories.story import Action, Character, Story


def generated_story(n: int = 300) -> Story:
    """Ada and Ben talk; the harbour is mentioned every 10th action; Cora rarely speaks."""
    actions = []
    for i in range(1, n + 1):
        who = "narration" if i % 5 == 0 else ("Ada" if i % 2 else "Ben")
        if i % 37 == 0:
            who = "Cora"
        text = f"Line {i}: the harbour gate is shut." if i % 10 == 0 else f"Line {i} of talk."
        actions.append(Action(index=i, character=who, text=text, chapter=f"Part {1 + i // 100}"))
    cast = [Character(name="Ada", aliases=["Miss Ada"], major=True),
            Character(name="Ben", major=True), Character(name="Cora")]
    return Story(title="Generated", characters=cast, actions=actions)


def ground(store, llm, story_id, position, *, method="bookmarks", character="Ada",
           space="test", lineage=None, budget=3, commit=True):
    lineage = lineage or Lineage.of(store, store.story(story_id).trunk_id)
    g, _ = run_sync(ground_at(store, llm, story_id=story_id, lineage=lineage, position=position,
                              character=character, method=method, budget=budget, space=space))
    if commit:
        store.commit_memory(g.writes)
    g.events = resolve_refs(g.events)
    return g


def kinds(g, kind):
    return [e for e in g.events if e["kind"] == kind]
