"""Passive updating: advance one bookmark from its checkpoint p over actions p+1 … i−1.

Each type has its own rule (concept: refine from mention windows; state: per block of
actions, unchanged / refine / append; behavioral: filter the subject's own actions in
batches). A sync never writes: it returns the new content and what it cost, including
the counterfactual cost without reuse (the same section synchronized from p = 0):
actions read = i − 1 exactly; model calls are counted from the same rule (state blocks,
behavioral batches over the subject's actions in 1 … i − 1, one concept call if the
subject was ever mentioned), and tokens = those calls × the mean tokens per call measured
in this sync, or, when this sync made no call, the running mean for the type.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from . import prompts
from .lineage import IndexedLine
from .llm import LLM
from .memory import (
    BehavioralContent,
    BehavioralExample,
    Bookmark,
    ConceptContent,
    StateContent,
    StateNode,
)
from .textsearch import bm25_rank, mention_pattern

WINDOW = 8
MAX_WINDOWS = 8
STATE_BLOCK = 64
FILTER_BATCH = 16
MAX_CANDIDATES = 256


class StateDecision(BaseModel):
    decision: Literal["unchanged", "refine", "append"]
    text: str = Field(default="", max_length=2000)


class Keep(BaseModel):
    keep: list[Annotated[int, Field(ge=1, le=FILTER_BATCH)]] = Field(
        default_factory=list, max_length=FILTER_BATCH)


@dataclass
class SyncOptions:
    state_block: int = STATE_BLOCK
    filter_batch: int = FILTER_BATCH
    max_candidates: int = MAX_CANDIDATES


@dataclass
class SyncResult:
    content: BaseModel
    p_old: int
    p_new: int
    actions_read: int
    events: list[dict] = field(default_factory=list)
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls_wo: float = 0
    prompt_tokens_wo: float = 0
    completion_tokens_wo: float = 0
    actions_read_wo: int = 0


class CostModel:
    """Running mean tokens per call by bookmark type (for counterfactual estimates)."""

    def __init__(self) -> None:
        self.totals: dict[str, list[float]] = {}

    def add(self, kind: str, calls: int, prompt: int, completion: int) -> None:
        if calls:
            t = self.totals.setdefault(kind, [0, 0, 0])
            t[0] += calls
            t[1] += prompt
            t[2] += completion

    def per_call(self, kind: str) -> tuple[float, float]:
        t = self.totals.get(kind)
        if not t or not t[0]:
            return 0.0, 0.0
        return t[1] / t[0], t[2] / t[0]


def _finish(result: SyncResult, llm: LLM, kind: str, calls_wo: float, costs: CostModel) -> SyncResult:
    result.calls = llm.usage["calls"]
    result.prompt_tokens = llm.usage["prompt_tokens"]
    result.completion_tokens = llm.usage["completion_tokens"]
    costs.add(kind, result.calls, result.prompt_tokens, result.completion_tokens)
    result.actions_read_wo = result.p_new
    if result.p_old == 0:  # a fresh bookmark: the counterfactual is what was spent
        result.calls_wo = result.calls
        result.prompt_tokens_wo = result.prompt_tokens
        result.completion_tokens_wo = result.completion_tokens
        return result
    if result.calls:
        per_p, per_c = result.prompt_tokens / result.calls, result.completion_tokens / result.calls
    else:
        per_p, per_c = costs.per_call(kind)
    result.calls_wo = max(calls_wo, result.calls)
    result.prompt_tokens_wo = max(result.calls_wo * per_p, result.prompt_tokens)
    result.completion_tokens_wo = max(result.calls_wo * per_c, result.completion_tokens)
    return result


async def sync_concept(bm: Bookmark, suffix: list[IndexedLine], *, llm: LLM, story: str,
                       keys: list[str], p_new: int, costs: CostModel,
                       mentioned_before: bool) -> SyncResult:
    content: ConceptContent = bm.content.model_copy(deep=True)  # type: ignore[assignment]
    content.keys = content.keys or keys
    result = SyncResult(content, bm.p, p_new, len(suffix))
    pattern = mention_pattern(content.keys)
    hits = [n for n, ln in enumerate(suffix) if pattern and pattern.search(f"{ln.character} {ln.text}")]
    if hits:
        windows = _windows(hits, len(suffix))
        ranked = sorted(windows, key=lambda w: (-sum(w[0] <= h <= w[1] for h in hits), w[0]))
        chosen = sorted(ranked[:MAX_WINDOWS])
        passages = [suffix[a:b + 1] for a, b in chosen]
        reply = await llm.text(
            prompts.concept(story=story, title=bm.title, subject=bm.subject,
                            current=content.description, p=bm.p, pinned=bm.pinned,
                            windows=passages),
            purpose="sync:concept", bookmark_id=bm.id, max_tokens=220)
        text = reply.text.strip()
        if text:
            content.description = _keep_pinned(bm, content.description, text)
        content.evidence = (content.evidence + [suffix[h].index for h in hits])[-32:]
    return _finish(result, llm, "concept", 1 if (hits or mentioned_before) else 0, costs)


def _windows(hits: list[int], n: int) -> list[tuple[int, int]]:
    """Merged ±WINDOW windows (positions in the suffix) around the mentions."""
    merged: list[list[int]] = []
    for h in hits:
        a, b = max(0, h - WINDOW), min(n - 1, h + WINDOW)
        if merged and a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def _keep_pinned(bm: Bookmark, old: str, new: str) -> str:
    """A pinned text is the user's: the sync may add to it, never drop it."""
    if bm.pinned and old and old not in new:
        return f"{old}\n{new}"
    return new


async def sync_state(bm: Bookmark, suffix: list[IndexedLine], *, llm: LLM, story: str,
                     p_new: int, costs: CostModel, block: int = STATE_BLOCK) -> SyncResult:
    content: StateContent = bm.content.model_copy(deep=True)  # type: ignore[assignment]
    result = SyncResult(content, bm.p, p_new, len(suffix))
    for start in range(0, len(suffix), block):
        chunk = suffix[start:start + block]
        node = content.nodes[-1] if content.nodes else None
        where = f"actions {node.start}–{node.end}" if node else "no node yet"
        decision = await llm.structured(
            prompts.state(story=story, title=bm.title, subject=bm.subject,
                          node=node.text if node else "", node_range=where, block=chunk),
            StateDecision, purpose="sync:state", bookmark_id=bm.id, max_tokens=160)
        first, last = chunk[0].index, chunk[-1].index
        text = decision.text.strip()
        kind = decision.decision
        if kind != "unchanged" and not text:
            kind = "unchanged"
        if kind == "refine" and (node is None or bm.pinned):
            kind = "append"  # nothing to refine yet, or the user's pinned node stays as written
        if kind == "unchanged":
            if node is not None:
                content.nodes[-1] = node.model_copy(update={"end": last})
            continue
        if kind == "refine":
            content.nodes[-1] = StateNode(text=text, start=node.start, end=last)
            result.events.append({"kind": "state_refined", "before": node.text, "after": text,
                                  "range": [node.start, last]})
        else:
            content.nodes.append(StateNode(text=text, start=first, end=last))
            result.events.append({"kind": "state_appended", "before": node.text if node else "",
                                  "after": text, "range": [first, last]})
    blocks_wo = math.ceil(p_new / block) if p_new else 0
    return _finish(result, llm, "state", blocks_wo, costs)


async def sync_behavioral(bm: Bookmark, suffix: list[IndexedLine], *, llm: LLM, story: str,
                          subject_keys: set[str], p_new: int, costs: CostModel,
                          subject_actions_before: int, options: SyncOptions) -> SyncResult:
    content: BehavioralContent = bm.content.model_copy(deep=True)  # type: ignore[assignment]
    result = SyncResult(content, bm.p, p_new, len(suffix))
    candidates = [(n, ln) for n, ln in enumerate(suffix) if ln.character.casefold() in subject_keys]
    if len(candidates) > options.max_candidates:  # keep the most relevant to the section
        ranked = bm25_rank(bm.title, [ln.text for _, ln in candidates])
        keep = {pos for pos, _ in ranked[: options.max_candidates]}
        rest = [k for k in range(len(candidates) - 1, -1, -1) if k not in keep]
        keep |= set(rest[: options.max_candidates - len(keep)])
        candidates = [c for k, c in enumerate(candidates) if k in keep]
    for start in range(0, len(candidates), options.filter_batch):
        batch = candidates[start:start + options.filter_batch]
        shown = [(_before(suffix, n), ln.text) for n, ln in batch]

        def check(k: Keep, size: int = len(batch)) -> None:
            bad = [x for x in k.keep if not 1 <= x <= size]
            if bad:
                raise ValueError(f"numbers must be between 1 and {size}, not {bad}")

        keep = await llm.structured(
            prompts.behavioral(story=story, title=bm.title, subject=bm.subject, candidates=shown),
            Keep, purpose="sync:behavioral", bookmark_id=bm.id, max_tokens=80, check=check)
        have = {e.index for e in content.examples}
        for x in sorted(set(keep.keep)):
            n, ln = batch[x - 1]
            if ln.index not in have:
                content.examples.append(BehavioralExample(index=ln.index, action=ln.text,
                                                          scene=shown[x - 1][0]))
    total = min(subject_actions_before, options.max_candidates)
    return _finish(result, llm, "behavioral", math.ceil(total / options.filter_batch), costs)


def _before(lines: list[IndexedLine], n: int) -> str:
    """The scene just before position n, short (the two previous lines)."""
    prev = lines[max(0, n - 2):n]
    return " / ".join(f"{ln.character}: {ln.text}"[:160] for ln in prev) or "(start)"
