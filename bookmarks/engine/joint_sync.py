"""Block-major synchronization: read a block of actions once for every bookmark that needs it.

Each bookmark still advances from its own checkpoint with its type's rule (concept: refine
from the passages that mention the subject; state: unchanged / refine / append per block;
behavioral: keep the subject's actions that fit the section), but the actions are cut into
ranges aligned to absolute story positions — multiples of the block size, and every point
where one of the bookmarks synchronized together starts, ends or keeps a version — so
bookmarks with different checkpoints still read the same ranges. A bookmark behind catches
up alone until it is aligned, then reads with the others. A prediction's step
(engine/step_sync.py) cuts instead from its own checkpoints, so no remnant at a multiple of
the block costs a call. When every gap is shorter than a
block (nearby predictions), each is read whole: one range, one call for all. A range is
read once for all bookmarks that need it, in one of two ways (the **mode**):

- `joint`: one call returns every bookmark's update; each part is validated on its own,
  an invalid part is asked again alone, and a part that stays invalid keeps that
  bookmark's last good version (the sync stops at the block before, as in sync.py).
  Consecutive ranges the same bookmarks need (a long gap, cut in blocks) are one read:
  as many whole blocks as fit the model's context go in one call, a state answering once
  per block, the others once for all (engine/joint_read.py) — never across a point where
  a bookmark keeps a version;
- `prefix`: consecutive calls, one per bookmark, each with the block first, so a server
  that keeps the last prompt (llama.cpp) or caches prefixes (vLLM) reads it once;
- `separate` (not run here): every bookmark on its own with sync.py's rules.

`resolve_mode` chooses: an explicit option, else the memory role's `sync_mode` setting,
else what the backend declares, else the measured default for the embedded model and
`joint` for a server (it charges per prompt token and may keep no prefix).

Costs are attributed per bookmark: a joint call's prompt tokens are split evenly among its
parts, its reply tokens by the length of each part, the call itself in equal shares, so
the totals are the real ones. The counterfactual without reuse is estimated per bookmark
from its own tokens per block read and its share of a call, as sync.py does per call, a
call from the start holding as many blocks as one could hold for it.
"""

from __future__ import annotations

import asyncio
import bisect
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from bookmarks.engine.joint_read import MAX_PARTS, Reader, tidy
from bookmarks.engine.lineage import IndexedLine
from bookmarks.engine.progress import report
from bookmarks.engine.sync import MAX_CONCEPT_CALLS, STATE_BLOCK, CostModel, SyncResult
from bookmarks.engine.textsearch import mention_pattern
from bookmarks.memory import Bookmark
from bookmarks.models.llm import LLM

__all__ = ["MAX_PARTS", "BlockSyncResult", "SyncJob", "bring_forward", "ranges",
           "resolve_mode", "tidy"]  # MAX_PARTS and tidy (joint_read.py) for their importers

JOINT, PREFIX, SEPARATE, AUTO = "joint", "prefix", "separate", "auto"
MODES = (AUTO, JOINT, PREFIX, SEPARATE)
# Measured with benchmarks/prepare_throughput.py (see README, "Benchmarks"): on the
# embedded llama.cpp server joint calls beat consecutive block-first calls; on a server
# that charges per prompt token joint calls read each block once by construction.
EMBEDDED_MODE = JOINT
SERVER_MODE = JOINT


def resolve_mode(llm: LLM, requested: str = AUTO) -> str:
    """The mode for this memory model: `requested`, else the role's setting, else the
    backend's own (`model.sync_mode`), else the measured default for its kind."""
    for choice in (requested, getattr(llm.config, "sync_mode", AUTO),
                   getattr(llm.model, "sync_mode", AUTO)):
        if choice and choice != AUTO:
            if choice not in MODES:
                raise ValueError(f"sync mode is one of {', '.join(MODES)}, not {choice!r}")
            return choice
    return EMBEDDED_MODE if llm.config.embedded else SERVER_MODE


@dataclass
class SyncJob:
    """One bookmark to bring forward from its checkpoint `bookmark.p` to `target`."""

    bookmark: Bookmark
    lines: list[IndexedLine]  # the visible actions p+1 … target, in story order
    target: int
    keys: list[str]  # the subject's names (mentions; the speaker of behavioral examples)
    preceding: list[IndexedLine] = field(default_factory=list)  # visible lines before p+1
    source: Hashable = None  # which text the lines are (branch, knower): shared reads need one
    emit: tuple[int, ...] = ()  # points to keep a version at on the way (read-once prepare)
    mentioned_before: bool = False


@dataclass
class BlockSyncResult(SyncResult):
    mode: str = ""  # joint | prefix | single (every read alone)
    shared: int = 0  # reads shared with other bookmarks
    parts: int = 0  # calls this bookmark took part in
    blocks: int = 0  # blocks it read in them (a call can read several)


@dataclass(eq=False)
class _Member:
    job: SyncJob
    content: BaseModel
    ranges: list[tuple[int, int]]
    position: dict[int, int]  # story index → position in `context`
    context: list[IndexedLine]
    pattern: object
    keys: set[str]
    usage: dict = field(default_factory=lambda: {"calls": 0, "prompt_tokens": 0,
                                                 "completion_tokens": 0})
    parts: int = 0
    blocks: int = 0
    capacity: int = 1  # blocks one call could read for it (joint_read.Reader.capacity)
    shared: int = 0
    joint: int = 0
    stalled: str = ""
    stalled_at: int = -1
    events: list[dict] = field(default_factory=list)
    segments: list[BlockSyncResult] = field(default_factory=list)
    cut: tuple = ()  # (p, usage, parts, shared, joint, events, blocks) at the last segment
    done_ranges: int = 0
    number: int = 0
    skip: set[tuple[int, int]] = field(default_factory=set)  # ranges a concept leaves out

    @property
    def bm(self) -> Bookmark:
        return self.job.bookmark

    def lines(self, lo: int, hi: int) -> list[IndexedLine]:
        idx = [ln.index for ln in self.job.lines]
        return self.job.lines[bisect.bisect_left(idx, lo):bisect.bisect_right(idx, hi)]


def ranges(p_old: int, target: int, block: int, cuts: set[int]) -> list[tuple[int, int]]:
    """(first, last) action ranges from p_old + 1 to target, cut at multiples of `block`
    (none with block 0) and at `cuts` — the same ranges for every bookmark whatever its
    checkpoint."""
    if target <= p_old:
        return []
    points = {target} | {x for x in cuts if p_old < x < target}
    if block:
        points |= set(range((p_old // block + 1) * block, target, block))
    out, lo = [], p_old + 1
    for x in sorted(points):
        out.append((lo, x))
        lo = x + 1
    return out


async def bring_forward(jobs: Sequence[SyncJob], llm: LLM, *, story: str, mode: str,
                        costs: CostModel, block: int = STATE_BLOCK, concurrency: int = 1,
                        schedule: str = "block", cuts: Sequence[int] = (), align: bool = True,
                        on_segment: Callable[[int, BlockSyncResult], None] | None = None,
                        ) -> list[list[BlockSyncResult]]:
    """Synchronize every job block-major (`schedule="block"`) or each bookmark alone over
    the same ranges (`schedule="bookmark"`, the per-bookmark schedule). Returns, per job,
    its segments: one per `emit` point on the way and one ending at its target (or where
    it stalled). `on_segment(job number, segment)` is called as each one is done.
    `align=False`: ranges are cut at `cuts` (and the bookmarks' own points) only."""
    starts: dict[Hashable, set[int]] = {}
    for j in jobs:
        starts.setdefault(j.source, set()).update({j.bookmark.p, j.target, *j.emit})
    # short gaps only (nearby predictions): one range each, not cut at a block boundary
    grid = block if align and (cuts or any(j.target - j.bookmark.p > block for j in jobs)) \
        else 0
    members = []
    for j in jobs:
        content = j.bookmark.content.model_copy(deep=True)
        if j.bookmark.type == "concept":
            content.keys = content.keys or list(j.keys)
        context = list(j.preceding[-2:]) + list(j.lines)
        members.append(_Member(
            j, content, ranges(j.bookmark.p, j.target, grid, starts[j.source] | set(cuts)),
            {ln.index: n for n, ln in enumerate(context)}, context,
            mention_pattern(content.keys if j.bookmark.type == "concept" else j.keys),
            {k.casefold() for k in j.keys}, number=len(members)))
        if j.bookmark.type == "concept":
            members[-1].skip = _sparse_ranges(members[-1])
        members[-1].cut = (j.bookmark.p, dict(members[-1].usage), 0, 0, 0, 0, 0)
    groups: dict[tuple, list[tuple[_Member, int]]] = {}
    for n, m in enumerate(members):
        for k, (lo, hi) in enumerate(m.ranges):
            key = (m.job.source, lo, hi) if schedule == "block" else (n, lo, hi)
            groups.setdefault(key, []).append((m, k))
    reader = Reader(llm, story, mode, costs, block or STATE_BLOCK)
    done = {(id(m), k): asyncio.Event() for m in members for k in range(len(m.ranges))}
    sem = asyncio.Semaphore(max(1, concurrency))

    async def run(keys: list[tuple]) -> None:
        for m, k in groups[keys[0]]:
            if k:
                await done[(id(m), k - 1)].wait()
        async with sem:
            await reader.read([m for m, _ in groups[keys[0]]], [(key[1], key[2]) for key in keys])
        for key in keys:
            for m, k in groups[key]:
                m.done_ranges = k + 1
                if key[2] in m.job.emit or k == len(m.ranges) - 1:
                    _segment(m, key[2], costs, block, on_segment)
                done[(id(m), k)].set()

    try:
        async with asyncio.TaskGroup() as tg:
            for keys in _reads(groups, merge=mode == JOINT):
                tg.create_task(run(keys))
    except BaseExceptionGroup as group:  # the first failure, as a single call raises it
        raise group.exceptions[0] from None
    for m in members:
        if not m.ranges:  # nothing to read: the bookmark stays where it is
            _segment(m, max(m.job.target, m.job.bookmark.p), costs, block, on_segment)
    return [m.segments for m in members]


def _reads(groups: dict[tuple, list[tuple[_Member, int]]], merge: bool) -> list[list[tuple]]:
    """The ranges as reads, in story order: with `merge`, consecutive ranges of one text
    that the same bookmarks need, one after the other, are one read — unless one of them
    keeps a version between the two."""
    reads: list[list[tuple]] = []
    ending: dict[tuple, list[tuple]] = {}  # (text or bookmark, last action) → its read
    for key in sorted(groups, key=lambda key: (key[2], key[1])):
        before = ending.pop((key[0], key[1] - 1), None) if merge else None
        if before is not None and _continues(groups[before[-1]], groups[key]):
            before.append(key)
        else:
            before = [key]
            reads.append(before)
        ending[(key[0], key[2])] = before
    return reads


def _continues(a: list[tuple[_Member, int]], b: list[tuple[_Member, int]]) -> bool:
    """Range b is the next range of exactly a's bookmarks, none keeping a version between."""
    nxt = {id(m): k for m, k in b}
    return len(a) == len(b) and all(nxt.get(id(m)) == k + 1 and m.ranges[k][1] not in m.job.emit
                                    for m, k in a)


def _sparse_ranges(m: _Member) -> set[tuple[int, int]]:
    """A concept refines its description in at most MAX_CONCEPT_CALLS ranges between two
    versions (as sync.py caps its calls): those that mention the subject most, the later
    first among equals; the others are left out."""
    stretches: list[list[tuple[int, int, int]]] = [[]]
    for lo, hi in m.ranges:
        hits = sum(1 for ln in m.lines(lo, hi)
                   if m.pattern and m.pattern.search(f"{ln.character} {ln.text}"))
        if hits:
            stretches[-1].append((hits, hi, lo))
        if hi in m.job.emit:
            stretches.append([])
    skip = set()
    for stretch in stretches:
        ranked = sorted(stretch, reverse=True)
        skip |= {(lo, hi) for _, hi, lo in ranked[MAX_CONCEPT_CALLS:]}
    return skip


def _segment(m: _Member, point: int, costs: CostModel, block: int,
             on_segment: Callable[[int, BlockSyncResult], None] | None) -> None:
    """Close the stretch since the last segment at `point` (or where the sync stalled)."""
    p_old, usage0, parts0, shared0, joint0, events0, blocks0 = m.cut
    if m.stalled and point > m.stalled_at:
        p_new = max(p_old, m.stalled_at)
    else:
        p_new = point
    res = BlockSyncResult(m.content.model_copy(deep=True), p_old, p_new,
                          len(m.lines(p_old + 1, p_new)), events=m.events[events0:])
    res.calls = tidy(m.usage["calls"] - usage0["calls"])
    res.prompt_tokens = m.usage["prompt_tokens"] - usage0["prompt_tokens"]
    res.completion_tokens = m.usage["completion_tokens"] - usage0["completion_tokens"]
    res.parts, res.shared, res.blocks = m.parts - parts0, m.shared - shared0, m.blocks - blocks0
    res.mode = "joint" if m.joint > joint0 else ("prefix" if res.shared else "single") \
        if res.parts else "none"  # none: nothing in the range asked the model
    if p_new < point:
        res.stalled = m.stalled
        res.events.append({"kind": "sync_stalled", "p": p_new, "behind": point - p_new,
                           "reason": m.stalled[:300]})
    _counterfactual(res, m, costs, block)
    report(m.bm.title, done=True)
    m.cut = (p_new, dict(m.usage), m.parts, m.shared, m.joint, len(m.events), m.blocks)
    m.segments.append(res)
    if on_segment:
        on_segment(m.number, res)


def _counterfactual(res: BlockSyncResult, m: _Member, costs: CostModel, block: int) -> None:
    """The same section synchronized from p = 0: the blocks before p_old at the rate of
    blocks that asked the model in this sync, at this sync's tokens per block read and its
    share of a call per call (else the running means), as many blocks a call as one call
    could hold for it (`capacity`: a synchronization from the start reads long stretches)."""
    kind = m.bm.type
    costs.add(kind, res.blocks, res.prompt_tokens, res.completion_tokens)
    costs.add(f"{kind}:calls", res.parts, res.calls, 0)  # a joint call is one part's
    res.actions_read_wo = res.p_new
    if res.p_old == 0:  # a fresh bookmark: the counterfactual is what was spent
        res.calls_wo, res.prompt_tokens_wo, res.completion_tokens_wo = (
            res.calls, res.prompt_tokens, res.completion_tokens)
        return
    spanned = max(1, math.ceil((res.p_new - res.p_old) / block))
    rate = min(1.0, res.blocks / spanned) if res.blocks else (
        1.0 if kind == "state" or m.job.mentioned_before else 0.0)
    if res.parts:
        per_p, per_c = res.prompt_tokens / res.blocks, res.completion_tokens / res.blocks
        per_call = res.calls / res.parts
    else:
        (per_p, per_c), per_call = costs.per_call(kind), costs.per_call(f"{kind}:calls")[0]
    before = rate * math.ceil(res.p_old / block)  # blocks read again without reuse
    res.calls_wo = tidy(res.calls + before * per_call / max(1, m.capacity))
    res.prompt_tokens_wo = res.prompt_tokens + before * per_p
    res.completion_tokens_wo = res.completion_tokens + before * per_c
