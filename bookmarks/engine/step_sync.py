"""One prediction's step: its selected bookmarks brought to its point together.

The bookmarks are synchronized block-major (engine/joint_sync.py). A step cuts its actions
from its own checkpoints, not from multiples of the block: every gap between two of them
(the bookmarks' checkpoints and the point) is cut in blocks of the block size counted from
the gap's start, as a bookmark synchronized on its own (sync.py) reads from its
checkpoint. A gap of 126 actions after a checkpoint at 268 is 269–332 and 333–394, not
269–320, 321–384 and 385–394 on the grid of multiples of 64: the fewest blocks a gap can
take (⌈gap / block⌉), each still at most the state block. In `joint` mode the blocks of a
gap that the same bookmarks need are one read, as many whole blocks a call as fit the
model's context (a state still decides once per block; joint_read.py): a gap of two or
three blocks is one call. When every gap is shorter than a block (nearby predictions),
each is read whole: one range, one call for all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import pairwise

from bookmarks.engine.grounding import GroundRequest
from bookmarks.engine.joint_sync import SyncJob, bring_forward
from bookmarks.engine.sync import STATE_BLOCK, CostModel, SyncResult
from bookmarks.memory import Bookmark
from bookmarks.models.llm import LLM
from bookmarks.store import Store


def step_cuts(checkpoints: Iterable[int], target: int, block: int) -> list[int]:
    """Where a step's ranges end: its checkpoints and the point, every gap between two
    of them cut every `block` actions from its start (none when every gap is shorter:
    each is read whole)."""
    points = sorted({p for p in checkpoints if p < target} | {target})
    if not block or len(points) < 2 or all(b - a <= block for a, b in pairwise(points)):
        return []
    out: list[int] = []
    for a, b in pairwise(points):
        out += list(range(a + block, b, block)) + [b]
    return out


async def bring_step(store: Store, llm: LLM, req: GroundRequest, selected: list[Bookmark], *,
                     mode: str, keys: Callable[[str], list[str]], costs: CostModel,
                     max_read: int = 0, block: int = STATE_BLOCK,
                     concurrency: int = 1) -> list[SyncResult]:
    """Bring one prediction's bookmarks to its point together (see `bring_forward`). With
    `max_read` (Play's partial memory), a bookmark that would read more stays where it is."""
    p_new = req.position - 1
    out: list[SyncResult | None] = [None] * len(selected)
    todo = []
    for n, bm in enumerate(selected):
        if max_read and p_new - bm.p > max_read:
            out[n] = SyncResult(bm.content, bm.p, bm.p, 0)
            out[n].events.append({"kind": "sync_deferred", "p": bm.p, "behind": p_new - bm.p})
        else:
            todo.append(n)
    low = min((selected[n].p for n in todo), default=p_new)
    lines = req.visible(req.lineage.lines(store, low + 1, p_new)) if p_new > low else []
    source = (req.lineage.branch_id, req.witness.character if req.witness else None)
    jobs = []
    for n in todo:
        bm = selected[n]
        names = keys(bm.subject)
        before = bool(bm.content.evidence) if bm.type == "concept" else (
            bm.type == "behavioral" and bm.p > 0
            and req.lineage.count_by(store, names, bm.p) > 0)
        jobs.append(SyncJob(bm, [ln for ln in lines if ln.index > bm.p], max(p_new, bm.p), names,
                            preceding=req.visible(req.lineage.lines(store, max(1, bm.p - 8), bm.p))
                            if bm.type == "behavioral" and bm.p else [],
                            source=source, mentioned_before=before))
    cuts = step_cuts((j.bookmark.p for j in jobs), p_new, block)
    # the embedded server answers one request at a time and keeps only the last prompt:
    # calls in story order, never interleaved, so consecutive ones share their block
    done = await bring_forward(jobs, llm, story=req.story_title, mode=mode, costs=costs,
                               block=block, cuts=cuts, align=False,
                               concurrency=1 if llm.config.embedded else concurrency)
    for n, segments in zip(todo, done, strict=True):
        out[n] = segments[-1]
    return out  # type: ignore[return-value]
