"""Reading a stretch of actions once for the bookmarks that need it (see joint_sync.py).

A read is one or more consecutive blocks (ranges of at most the state block) that the
same bookmarks need. In `joint` mode, as many whole blocks as fit the model's context —
the prompt and a reply with room for every answer — are read in one call
(jp.joint_blocks): each state answers once per block, in block order (unchanged / refine
/ append, or a first state for its first block), so a state keeps the paper's granularity
of a block; a description or examples answer once for all of them. A single block is read
as before (`_chunk`): one joint call for its bookmarks, or, for one bookmark or in
`prefix` mode, the type's own prompt, packed to the context (a block too long for one
prompt is read in chunks). A bookmark alone reads several blocks with the same
multi-block prompt in `joint` mode (a section new late in the story catches up from the
start in a few calls, not one a block); `prefix` mode keeps one block a call, its prompts
sharing the block as their prefix.

Every answer is validated on its own. An invalid one is asked again alone with the
type's own prompt (`joint_part_reasked`): a state from its first invalid block on, one
block at a time, the blocks before it kept; a description or examples over the whole
read. A part still invalid keeps the bookmark's last good version: its sync stops at the
block before (`stalled`).

Costs: a call's prompt tokens are split evenly among its parts, its reply tokens by the
length of each part's answers, the call in equal shares, so the totals are what was
spent; `blocks` counts the blocks each bookmark read (per call it took part in), the
unit of the counterfactual's tokens, and `capacity` how many blocks a call could hold for
it, the rate of the counterfactual's calls (joint_sync._counterfactual).
"""

from __future__ import annotations

import json

from bookmarks.engine import joint_parts as parts
from bookmarks.engine import joint_prompts as jp
from bookmarks.engine import prompts
from bookmarks.engine.actor import echoes_prompt
from bookmarks.engine.lineage import IndexedLine
from bookmarks.engine.progress import report
from bookmarks.engine.sync import (
    BEHAVIORAL_TOKENS,
    CONCEPT_TOKENS,
    STATE_TOKENS,
    CostModel,
    FirstState,
    StateDecision,
    _failure,
    _non_blank,
    _whole_sentences,
)
from bookmarks.errors import ModelError
from bookmarks.models.llm import LLM

JOINT = "joint"
MAX_PARTS = 12  # bookmarks per joint call (more: several calls, the block first in each)
MAX_REPLY = 2048  # a joint reply's room (most parts are a few words: "unchanged", [])
TOKENS = {"state": STATE_TOKENS, "first_state": STATE_TOKENS, "concept": CONCEPT_TOKENS,
          "behavioral": BEHAVIORAL_TOKENS}
BLOCK_LABEL = 48  # characters of a block's heading in a multi-block prompt


def tidy(x: float) -> float | int:
    """A sum of call shares, as a whole number when it is one (3 decimals otherwise)."""
    x = round(x, 3)
    return int(x) if x == int(x) else x


def _share(calls: int, n: int, k: int) -> float:
    """Part k's share of `calls` (3 decimals, the last part taking the rest: exact sums)."""
    each = round(calls / n, 3)
    return each if k < n - 1 else round(calls - each * (n - 1), 3)


def _split(total: int, n: int, k: int) -> int:
    return total // n + (1 if k < total % n else 0)


def _add(total: dict, usage: dict) -> None:
    for key in ("calls", "prompt_tokens", "completion_tokens"):
        total[key] += usage.get(key, 0)


def _stall(m, at: int, why: str) -> None:
    m.stalled, m.stalled_at = why, max(m.cut[0], at)


def _chars(lines: list[IndexedLine]) -> int:
    return sum(len(prompts.line_text(ln)) + 1 for ln in lines)


class Reader:
    """Reads consecutive blocks for the bookmarks that need them, in the chosen mode."""

    def __init__(self, llm: LLM, story: str, mode: str, costs: CostModel, block: int = 64):
        self.llm, self.story, self.mode, self.costs, self.block = llm, story, mode, costs, block

    async def read(self, members: list, spans: list[tuple[int, int]]) -> None:
        """Read the blocks `spans` ((first, last) action ranges, consecutive) for `members`."""
        active = [m for m in members if not m.stalled]
        if not active:
            return
        blocks = [b for lo, hi in spans if (b := active[0].lines(lo, hi))]
        if blocks:
            lines = [ln for b in blocks for ln in b]
            capacity = self.capacity(active, _chars(lines) / len(lines) * self.block)
            for m in active:
                m.capacity = max(m.capacity, capacity)
        at = 0
        while at < len(blocks) and active:
            fit = self._fit(active, blocks[at:]) if self.mode == JOINT else None
            if fit is not None:
                k, work = fit
                self._report(active, blocks[at][0])
                await self._joint_blocks(work, blocks[at:at + k])
                at += k
            else:
                await self._block(active, blocks[at])
                at += 1
            active = [m for m in active if not m.stalled]

    def _report(self, active: list, first: IndexedLine) -> None:
        for m in active:
            report(m.bm.title, type=m.bm.type, unit="block", step=m.done_ranges + 1,
                   steps=len(m.ranges), read=first.index - m.job.bookmark.p - 1,
                   total=len(m.job.lines))

    # -- several blocks in one call ------------------------------------------------------

    def _fit(self, active: list, blocks: list[list[IndexedLine]]) -> tuple[int, list] | None:
        """The most whole blocks (at least 2) that one call per MAX_PARTS bookmarks can
        read — the prompt within the context, every answer within the reply's room — and
        the bookmarks' parts for them; None: read the next block alone."""
        for k in range(len(blocks), 1, -1):
            span = blocks[:k]
            work = [(m, spec) for m in active if (spec := parts.span_spec(m, span)) is not None]
            if not work:
                return k, work  # nothing in these blocks asks the model
            room = self._span_room(work, k)
            if room is not None and _chars([ln for b in span for ln in b]) <= room:
                return k, work
        return None

    def capacity(self, active: list, block_chars: float, most: int = 64) -> int:
        """About how many whole blocks of `block_chars` characters one call could read for
        these bookmarks (1 in `prefix` mode): the rate a synchronization from the start
        would read at, for the counterfactual without reuse."""
        if self.mode != JOINT:
            return 1
        work = [(m, {"kind": parts.kind_of(m)}) for m in active]
        k = 1
        while k < most:
            room = self._span_room(work, k + 1)
            if room is None or room < (k + 1) * block_chars:
                break
            k += 1
        return k

    def _span_room(self, work: list, k: int) -> int | None:
        """Characters of actions a multi-block call may hold (None: its answers would not
        fit the reply's room). Each bookmark's own prompt over them must fit too, for a
        re-ask alone."""
        rooms = [self.llm.prompt_chars(TOKENS[spec["kind"]],
                                       reserve=1200 + len(parts.section_text(m)))
                 for m, spec in work]
        for start in range(0, len(work), MAX_PARTS):
            batch = work[start:start + MAX_PARTS]
            reply = sum(parts.reply_tokens(spec, k) for _, spec in batch) + 16
            if reply > MAX_REPLY:
                return None
            text = sum(len(parts.section_text(m)) for m, _ in batch)
            rooms.append(self.llm.prompt_chars(
                reply, reserve=2000 + text + 120 * len(batch) + BLOCK_LABEL * k))
        return min(rooms)

    async def _joint_blocks(self, work: list, blocks: list[list[IndexedLine]]) -> None:
        for m, _ in work:
            m.shared += len(work) > 1
        for start in range(0, len(work), MAX_PARTS):
            await self._blocks_call(work[start:start + MAX_PARTS], blocks)

    async def _blocks_call(self, batch: list, blocks: list[list[IndexedLine]]) -> None:
        k = len(blocks)
        span = [ln for b in blocks for ln in b]
        shape = tuple((spec["kind"], len(spec.get("candidates", ()))) for _, spec in batch)
        per_block = [parts.per_block(spec) for _, spec in batch]
        kinds = {kind for kind, _ in shape} | ({"state"} if any(per_block) else set())
        llm = self.llm.metered()
        try:
            reply = await llm.structured(
                jp.joint_blocks(story=self.story, blocks=blocks,
                                parts=[parts.part_text(m, spec) for m, spec in batch],
                                per_block=per_block, kinds=kinds),
                jp.joint_schema(shape, k), purpose="sync:joint",
                max_tokens=sum(parts.reply_tokens(spec, k) for _, spec in batch) + 16)
        except ModelError as exc:
            _failure(exc)  # a server that is down fails the step; an invalid reply does not
            reply = None
        raw = [([reply.part(n, b) for b in range(1, k + 1)] if each else reply.part(n))
               if reply else ([None] * k if each else None)
               for n, each in enumerate(per_block, start=1)]
        self._charge(batch, llm.usage, raw, blocks=k)
        for (m, spec), value, each in zip(batch, raw, per_block, strict=True):
            if not each:
                valid = parts.validate(spec, value)
                if valid is not None:
                    parts.apply(m, spec, valid, span)
                else:  # asked again alone, over all the blocks
                    m.events.append({"kind": "joint_part_reasked",
                                     "range": [span[0].index, span[-1].index]})
                    await self._single(m, spec, span)
                continue
            for j, block in enumerate(blocks):
                one = parts.block_spec(spec, j)
                valid = parts.validate(one, value[j])
                if valid is None:  # this block and the next asked again alone, one by one
                    m.events.append({"kind": "joint_part_reasked",
                                     "range": [block[0].index, span[-1].index]})
                    for rest in blocks[j:]:
                        if m.stalled:
                            break
                        await self._single(m, parts.spec_for(m, rest), rest)
                    break
                parts.apply(m, one, valid, block)

    def _charge(self, batch: list, usage: dict, raw: list, blocks: int = 1) -> None:
        sizes = [len(json.dumps(r)) if r is not None else 1 for r in raw]
        for n, (m, _) in enumerate(batch):
            _add(m.usage, {"calls": _share(usage["calls"], len(batch), n),
                           "prompt_tokens": _split(usage["prompt_tokens"], len(batch), n),
                           "completion_tokens": round(usage["completion_tokens"] * sizes[n]
                                                      / sum(sizes))})
            m.parts += 1
            m.joint += 1
            m.blocks += blocks

    # -- one block -----------------------------------------------------------------------

    async def _block(self, active: list, lines: list[IndexedLine]) -> None:
        start = 0
        while start < len(lines) and active:
            chunk = prompts.pack(lines[start:], self._room(active), newest=False)
            self._report(active, chunk[0])
            await self._chunk(active, chunk)
            start += len(chunk)
            active = [m for m in active if not m.stalled]

    def _room(self, active: list) -> int:
        text = sum(len(parts.section_text(m)) for m in active[:MAX_PARTS])
        reply = min(MAX_REPLY, sum(TOKENS[parts.kind_of(m)] for m in active[:MAX_PARTS]) + 16)
        rooms = [self.llm.prompt_chars(TOKENS[parts.kind_of(m)],
                                       reserve=1200 + len(parts.section_text(m)))
                 for m in active]
        if self.mode == JOINT and len(active) > 1:
            rooms.append(self.llm.prompt_chars(reply, reserve=1600 + text + 120 * len(active)))
        return min(rooms)

    async def _chunk(self, active: list, chunk: list[IndexedLine]) -> None:
        work = [(m, spec) for m in active if (spec := parts.spec_for(m, chunk)) is not None]
        for m, _ in work:
            m.shared += len(work) > 1
        if len(work) > 1 and self.mode == JOINT:
            for start in range(0, len(work), MAX_PARTS):
                batch = work[start:start + MAX_PARTS]
                if len(batch) > 1:
                    await self._joint(batch, chunk)
                else:
                    await self._single(*batch[0], chunk)
            return
        for m, spec in work:  # consecutive, the block first: a prefix cache serves it
            await self._single(m, spec, chunk)

    async def _single(self, m, spec: dict, chunk: list[IndexedLine]) -> None:
        llm = self.llm.metered()
        bm = m.bm
        try:
            if spec["kind"] == "concept":
                reply = await llm.text(jp.block_concept(
                    story=self.story, block=chunk, title=bm.title, subject=bm.subject,
                    current=m.content.description, p=chunk[0].index - 1, pinned=bm.pinned),
                    purpose="sync:concept", bookmark_id=bm.id, max_tokens=CONCEPT_TOKENS)
                text = reply.text.strip()
                text = _whole_sentences(text) if reply.finish_reason == "length" else text
                value = jp.ConceptUpdate(description=text[:2000])
                if echoes_prompt(text):
                    value = None
            elif spec["kind"] == "behavioral":
                value = await llm.structured(
                    jp.block_behavioral(story=self.story, block=chunk, title=bm.title,
                                        subject=bm.subject, candidates=spec["candidates"]),
                    jp.KeepNumbers, purpose="sync:behavioral", bookmark_id=bm.id,
                    max_tokens=BEHAVIORAL_TOKENS, check=parts.keep_check(len(spec["candidates"])))
            elif spec["kind"] == "first_state":
                value = await llm.structured(
                    prompts.first_state(story=self.story, title=bm.title, subject=bm.subject,
                                        block=chunk),
                    FirstState, purpose="sync:state", bookmark_id=bm.id,
                    max_tokens=STATE_TOKENS, check=_non_blank)
            else:
                node = m.content.nodes[-1]
                value = await llm.structured(
                    prompts.state(story=self.story, title=bm.title, subject=bm.subject,
                                  node=node.text, node_range=f"actions {node.start}–{node.end}",
                                  block=chunk),
                    StateDecision, purpose="sync:state", bookmark_id=bm.id,
                    max_tokens=STATE_TOKENS)
        except ModelError as exc:
            _add(m.usage, llm.usage)
            _stall(m, chunk[0].index - 1, _failure(exc))
            return
        _add(m.usage, llm.usage)
        m.parts += 1
        m.blocks += 1
        if value is None:  # a concept reply that was not a description
            _stall(m, chunk[0].index - 1, "the reply was not a description (JSON, or the "
                   f"prompt's own words): {reply.text[:120]!r}")
            return
        parts.apply(m, spec, value, chunk)

    async def _joint(self, batch: list, chunk: list[IndexedLine]) -> None:
        shape = tuple((spec["kind"], len(spec.get("candidates", ()))) for _, spec in batch)
        texts = [parts.part_text(m, spec) for m, spec in batch]
        llm = self.llm.metered()
        try:
            reply = await llm.structured(
                jp.joint_update(story=self.story, block=chunk, parts=texts,
                                kinds={kind for kind, _ in shape}),
                jp.joint_schema(shape), purpose="sync:joint",
                max_tokens=min(MAX_REPLY, sum(TOKENS[k] for k, _ in shape) + 16))
        except ModelError as exc:
            _failure(exc)  # a server that is down fails the step; an invalid reply does not
            reply = None
        raw = [reply.part(n) if reply else None for n in range(1, len(batch) + 1)]
        self._charge(batch, llm.usage, raw)
        again = []
        for (m, spec), value in zip(batch, raw, strict=True):
            valid = parts.validate(spec, value)
            if valid is None:
                again.append((m, spec))
            else:
                parts.apply(m, spec, valid, chunk)
        for m, spec in again:  # an invalid part is asked again alone
            m.events.append({"kind": "joint_part_reasked", "range": [chunk[0].index,
                                                                     chunk[-1].index]})
            await self._single(m, spec, chunk)
