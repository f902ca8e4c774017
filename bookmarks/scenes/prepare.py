"""Prepared story memory: walk a story in order for its (major) characters, proposing and
synchronizing their bookmarks in the shared "story" memory and leaving checkpoints every
N actions, so that a scene started at any point reuses the latest checkpoint at or before
it and reads only the gap.

Each checkpoint (a point × a character) commits on its own, so a stopped preparation
loses at most the step in progress and resumes where it stopped (the progress record
is in the settings table, `prepared:<story id>`). Before it starts, `estimate` says how
many model calls, tokens and seconds it should take, from the rates measured in this
database's call log (or stated defaults when there are none yet).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bookmarks.engine.ground import chosen_characters, ground_at
from bookmarks.engine.joint_sync import SEPARATE, resolve_mode
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.read_once import estimate, prepare_read_once
from bookmarks.engine.sync import STATE_BLOCK
from bookmarks.errors import BookmarksError, StaleMemoryError
from bookmarks.models.llm import LLM
from bookmarks.store import Store

DEFAULT_EVERY = 100
# used until this database has measured rates: a small local model on 2 cores
DEFAULT_SECONDS_PER_CALL = 10.0
DEFAULT_TOKENS_PER_CALL = 1800


@dataclass
class Plan:
    story_id: int
    characters: list[str]
    every: int
    points: list[int]  # checkpoints p (grounding the action p + 1)
    done: int  # checkpoints already prepared (resuming)
    calls: int
    tokens: int
    seconds: float
    measured: bool  # rates from this database's call log (else defaults)

    @property
    def steps(self) -> int:
        return len(self.points) * len(self.characters)

    def describe(self) -> str:
        source = "measured rates" if self.measured else "default rates (nothing measured yet)"
        left = self.steps - self.done
        return (f"{len(self.points)} checkpoints × {len(self.characters)} characters "
                f"({', '.join(self.characters)}) every {self.every} actions: {left} of "
                f"{self.steps} steps to do; about {self.calls} model calls, {self.tokens:,} "
                f"tokens, {_duration(self.seconds)} ({source}).")


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


async def _checkpoint(store: Store, memory: LLM, story_id: int, lineage: Lineage, point: int,
                      character: str, budget: int, tries: int = 3):
    """One checkpoint, committed only if nothing it read changed meanwhile (a presence
    correction or a merge moves the trunk's epoch): then it is grounded again."""
    for attempt in range(tries):
        epoch = store.branch_epoch(lineage.branch_id)
        grounding, _ = await ground_at(store, memory, story_id=story_id, lineage=lineage,
                                       position=point + 1, character=character,
                                       method="bookmarks", budget=budget)
        try:
            store.commit_memory(grounding.writes, expect_epoch=(lineage.branch_id, epoch))
            return grounding
        except StaleMemoryError:
            if attempt == tries - 1:
                raise
    raise AssertionError("unreachable")


def _key(story_id: int) -> str:
    return f"prepared:{story_id}"


def progress(store: Store, story_id: int) -> dict:
    """How far a story's memory is prepared: {"every", "characters", "done", "last_point"}."""
    return store.get_setting(_key(story_id), {}) or {}


def plan(store: Store, story_id: int, *, characters: list[str] | None = None,
         every: int = DEFAULT_EVERY, budget: int = 3) -> Plan:
    story = store.story(story_id)
    names = chosen_characters(store, story_id, characters)
    if every < 10:
        raise BookmarksError("Checkpoints closer than every 10 actions cost more than they save.")
    points = list(range(every, story.n_actions, every))
    if not points:
        raise BookmarksError(f"The story has {story.n_actions} actions: fewer than one "
                             f"checkpoint every {every}.")
    before = progress(store, story_id)
    done = before.get("done", 0) if (before.get("every") == every
                                      and before.get("characters") == names) else 0
    # reading the story once for every step left (a proposal each, one block-major pass;
    # see engine/read_once.py), timed at this database's measured seconds per token
    calls, tokens = estimate(store, story_id, characters=len(names), points=points, done=done,
                             budget=budget, block=STATE_BLOCK)
    rates = store.call_rates("memory")
    measured = bool(rates.get("n")) and rates["n"] >= 5 and bool(rates.get("tokens"))
    per_token = rates["ms"] / 1000 / rates["tokens"] if measured \
        else DEFAULT_SECONDS_PER_CALL / DEFAULT_TOKENS_PER_CALL
    return Plan(story_id, names, every, points, done, calls, tokens, tokens * per_token,
                measured)


async def prepare(store: Store, memory: LLM, the_plan: Plan, *, budget: int = 3,
                  on_step: Callable[[dict], None] | None = None,
                  should_stop: Callable[[], bool] | None = None) -> dict:
    """Run the plan from where it stopped; returns the progress record."""
    story = store.story(the_plan.story_id)
    lineage = Lineage.of(store, story.trunk_id)
    record = {"every": the_plan.every, "characters": the_plan.characters,
              "done": the_plan.done, "last_point": 0, "steps": the_plan.steps}
    if resolve_mode(memory) != SEPARATE:  # every step left at once, reading the story once

        def step_done(info: dict) -> None:
            record.update(done=info["step"], last_point=info["point"])
            store.set_setting(_key(story.id), record)
            if on_step:
                on_step({**info, "steps": the_plan.steps})

        await prepare_read_once(store, memory, story_id=story.id,
                                characters=the_plan.characters, points=the_plan.points,
                                done=the_plan.done, budget=budget, on_step=step_done,
                                should_stop=should_stop)
        return record
    step = 0
    for point in the_plan.points:
        for character in the_plan.characters:
            step += 1
            if step <= the_plan.done:
                continue
            if should_stop and should_stop():
                return record
            grounding = await _checkpoint(store, memory, story.id, lineage, point, character,
                                          budget)
            record.update(done=step, last_point=point)
            store.set_setting(_key(story.id), record)
            if on_step:
                syncs = [e for e in grounding.events if e["kind"] == "synchronized"]
                on_step({"step": step, "steps": the_plan.steps, "point": point,
                         "character": character, "calls": grounding.usage.get("calls", 0),
                         "actions_read": sum(e["actions_read"] for e in syncs)})
    return record
