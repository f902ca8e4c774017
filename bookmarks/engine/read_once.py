"""Prepare memory for every character reading the story once.

Preparing checkpoints one by one (each character at each point grounding on its own)
reads the story again for every bookmark that is new at a late point and for every
bookmark of every character. Here the work is split in two:

1. **Plan** — at each checkpoint in order, each character's sections are proposed and
   matched, as a grounding step does, against the bookmarks that step would see (those
   already in memory, and those planned at earlier steps, as of their last planned point).
   Proposals and matches read titles only, never contents, so nothing needs synchronizing
   yet. The characters of one checkpoint propose one after the other, each seeing the
   sections used up to that point (their prompts share all but their end, which a prefix
   cache serves), then match one after the other, each seeing the others' choices.
2. **Read once** — every bookmark planned at any step is brought forward in one
   block-major pass (joint_sync.bring_forward) from its checkpoint to the last point it
   is needed at, keeping a version at each point a step selected it. A block is read
   once for all of them. As the pass goes by a checkpoint, its steps commit, in order,
   each on its own (a stopped preparation resumes after the last committed step).

A bookmark first proposed at point c gets no version before c: titles and contents never
reach a point earlier than the step that chose them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from bookmarks.engine.ground import request_at
from bookmarks.engine.grounding import GroundRequest, MemoryWrites
from bookmarks.engine.joint_sync import MAX_PARTS, SyncJob, bring_forward, resolve_mode
from bookmarks.engine.lineage import Lineage
from bookmarks.engine.method_bookmarks import BookmarksGrounder, BookmarksOptions, Step, _keys
from bookmarks.engine.recall import visible_bookmarks
from bookmarks.engine.sync import STATE_BLOCK, SyncOptions, SyncResult
from bookmarks.errors import StaleMemoryError
from bookmarks.memory import Bookmark
from bookmarks.models.llm import LLM
from bookmarks.store import Store

SPACE = "story"


class Stopped(Exception):
    """The preparation was asked to stop (before committing a step)."""


@dataclass
class _Planned:
    step: int
    point: int
    character: str
    req: GroundRequest
    plan: Step


@dataclass(eq=False)
class _Entry:
    """One bookmark across the preparation: where it starts, where steps want it."""

    bookmark: Bookmark
    start: Bookmark  # as it was before this preparation (its checkpoint and content)
    points: list[int] = field(default_factory=list)


async def prepare_read_once(store: Store, memory: LLM, *, story_id: int, characters: list[str],
                            points: list[int], done: int = 0, budget: int = 3,
                            block: int = STATE_BLOCK, mode: str = "auto",
                            on_step: Callable[[dict], None] | None = None,
                            should_stop: Callable[[], bool] | None = None,
                            tries: int = 3) -> dict:
    """Run the steps (point × character, in that order) after the first `done`; returns
    {"done": steps committed in all, "last_point", "mode"}. `should_stop` is asked once
    before each step commits. A step commits only if nothing the pass read changed since
    it began (the trunk's epoch: a presence correction, a merge); otherwise the pass starts
    again after the last committed step, at most `tries` times."""
    record = {"done": done, "last_point": 0, "mode": resolve_mode(memory, mode)}
    for attempt in range(tries):
        try:
            await _once(store, memory, story_id=story_id, characters=characters, points=points,
                        budget=budget, block=block, record=record, on_step=on_step,
                        should_stop=should_stop)
            return record
        except StaleMemoryError:
            if attempt == tries - 1:
                raise
    return record


async def _once(store: Store, memory: LLM, *, story_id: int, characters: list[str],
                points: list[int], budget: int, block: int, record: dict,
                on_step: Callable[[dict], None] | None,
                should_stop: Callable[[], bool] | None) -> None:
    story = store.story(story_id)
    lineage = Lineage.of(store, story.trunk_id)
    epoch = store.branch_epoch(lineage.branch_id)
    mode, done = record["mode"], record["done"]
    grounder = BookmarksGrounder(store, memory, BookmarksOptions(
        budget=budget, sync=SyncOptions(state_block=block), sync_mode=mode))
    entries: dict[object, _Entry] = {}
    planned: list[_Planned] = []
    cast = store.characters(story_id)
    await memory.discover_context()
    n = 0
    for point in points:
        todo = []
        for character in characters:
            n += 1
            if n > done:
                todo.append((n, character, request_at(
                    store, story_id=story_id, lineage=lineage, position=point + 1,
                    character=character, budget=budget, space=SPACE)))
        # the proposals of one point one after the other: they share all but their end
        before = _visible(store, story_id, lineage, point, entries)
        proposed = []
        for _, _, req in todo:
            meter, events = memory.metered(), []
            sections = await grounder._propose(req, before, cast, meter, events)
            events[:0] = [{"kind": "proposed", "title": x.title, "type": x.type,
                           "subject": x.subject} for x in sections]
            proposed.append((sections, meter, events))
        for (k, character, req), (sections, meter, events) in zip(todo, proposed, strict=True):
            existing = _visible(store, story_id, lineage, point, entries)
            writes = MemoryWrites()
            selected = await grounder._match(req, sections, existing, meter, events, writes)
            # a new section's row (no version: seen nowhere yet) and the match decisions
            # now, so the next steps remember them as a step after a commit would
            store.commit_memory(MemoryWrites(new_bookmarks=writes.new_bookmarks,
                                             decisions=writes.decisions))
            writes.new_bookmarks, writes.decisions = [], []
            for bm in selected:
                entry = entries.get(_identity(bm))
                if entry is None:
                    entry = entries[_identity(bm)] = _Entry(bm, replace(bm))
                if point not in entry.points:
                    entry.points.append(point)
                bm.p, bm.version_id = point, bm.version_id or -1  # as the step would leave it
            plan = Step(point, cast, existing, meter, events, writes, selected)
            planned.append(_Planned(k, point, character, req, plan))
    if not planned:
        return
    # 2. one block-major pass for every planned bookmark
    last = max(p for e in entries.values() for p in e.points)
    low = min(e.start.p for e in entries.values())
    lines = lineage.lines(store, low + 1, last)
    order = list(entries.values())
    jobs = []
    for e in order:
        start = e.start
        names = _keys(start.subject, cast)
        jobs.append(SyncJob(
            start, [ln for ln in lines if start.p < ln.index <= max(e.points)], max(e.points),
            names, preceding=lineage.lines(store, max(1, start.p - 8), start.p) if start.p else [],
            source=(lineage.branch_id, None), emit=tuple(sorted(e.points)),
            mentioned_before=bool(getattr(start.content, "evidence", None)) or start.p > 0))
    number = {id(e.bookmark): k for k, e in enumerate(order)}  # ids change as steps commit
    segments: dict[tuple[int, int], SyncResult] = {}
    taken: set[tuple[int, int]] = set()
    pending = list(planned)

    def commit_ready() -> None:
        while pending:
            step = pending[0]
            needed = [(number[id(bm)], step.point) for bm in step.plan.selected]
            if any(key not in segments and order[key[0]].start.p < step.point for key in needed):
                return
            if should_stop and should_stop():
                raise Stopped
            results = []
            for bm, key in zip(step.plan.selected, needed, strict=True):
                seg = segments.get(key)
                if seg is None or key in taken:  # already at the point, or read by a step before
                    at = seg.p_new if seg is not None else bm.p
                    seg = SyncResult(bm.content if seg is None else seg.content, at, at, 0)
                taken.add(key)
                results.append(seg)
            grounding = grounder.conclude(step.req, step.plan, results)
            store.commit_memory(grounding.writes, expect_epoch=(lineage.branch_id, epoch))
            pending.pop(0)
            record.update(done=step.step, last_point=step.point)
            if on_step:
                syncs = [e for e in grounding.events if e["kind"] == "synchronized"]
                on_step({"step": step.step, "point": step.point, "character": step.character,
                         "calls": grounding.usage.get("calls", 0), "mode": mode,
                         "actions_read": sum(e["actions_read"] for e in syncs)})

    def on_segment(k: int, seg) -> None:
        segments[(k, seg.p_new if not seg.stalled else _point_of(seg))] = seg
        commit_ready()

    try:
        await bring_forward(jobs, memory, story=story.title, mode=mode, costs=grounder.costs,
                            block=block, cuts=blocks_between(points, block), align=False,
                            on_segment=on_segment,
                            concurrency=1 if memory.config.embedded else 4)
        commit_ready()
    except Stopped:
        pass


def estimate(store: Store, story_id: int, *, characters: int, points: list[int], done: int = 0,
             budget: int = 3, block: int = STATE_BLOCK) -> tuple[int, int]:
    """About how many calls and tokens the steps after the first `done` take: a proposal
    each (≈800 tokens), then one pass over actions 1 … the last point (new sections read
    from the start) for about `budget` bookmarks a character, a joint call a block for up
    to MAX_PARTS of them, each with its section (≈60 tokens) and its answer (≈25)."""
    steps = len(points) * characters - done
    if steps <= 0 or not points:
        return 0, 0
    live = budget * characters
    reads = math.ceil(live / MAX_PARTS)
    ranges = len(blocks_between(points, block))
    text = sum(len(who) + len(words) + 8
               for _, who, words in store.action_tuples(story_id, 1, max(points)))
    calls = steps + ranges * reads
    tokens = steps * 800 + text // 4 * reads + ranges * (reads * 300 + live * 85)
    return calls, tokens


def blocks_between(points: list[int], block: int) -> list[int]:
    """The checkpoints, and each gap between two cut in equal blocks of at most `block`
    actions (every 100 with blocks of 64: two blocks of 50, not 64 + 36 + 28 + …)."""
    out, previous = [], 0
    for point in sorted(points):
        k = math.ceil((point - previous) / block)
        out += [previous + round(j * (point - previous) / k) for j in range(1, k)] + [point]
        previous = point
    return out


def _point_of(seg) -> int:
    """The point a stalled segment was meant to reach (it says how far behind it is)."""
    behind = next((e["behind"] for e in seg.events if e["kind"] == "sync_stalled"), 0)
    return seg.p_new + behind


def _identity(bm: Bookmark) -> object:
    return bm.id if bm.id is not None else ("new", bm.key)


def _visible(store: Store, story_id: int, lineage: Lineage, point: int,
             entries: dict[object, _Entry]) -> list[Bookmark]:
    """What a step at `point` sees: memory's bookmarks, each as planned so far if it is."""
    out, seen = [], set()
    for bm in visible_bookmarks(store, story_id, SPACE, lineage, point):
        entry = entries.get(_identity(bm))
        out.append(entry.bookmark if entry else bm)
        seen.add(_identity(bm))
    out += [e.bookmark for key, e in entries.items() if key not in seen]
    return out
