"""Passive updating: advance one bookmark from its checkpoint p over actions p+1 … i−1.

Each type has its own rule (concept: refine from mention windows; state: per block of
actions, unchanged / refine / append; behavioral: filter the subject's own actions in
batches). A reply that stays invalid (or, for a concept, is JSON or the prompt's own
words) ends the sync at the last good checkpoint: the bookmark keeps its last good
version and the prediction goes on (`SyncResult.stalled` says why).

A sync never writes: it returns the new content and what it cost, including the
counterfactual cost without reuse (the same section synchronized from p = 0):
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

from bookmarks.engine import prompts
from bookmarks.engine.actor import echoes_prompt
from bookmarks.engine.lineage import IndexedLine
from bookmarks.engine.progress import report
from bookmarks.engine.textsearch import bm25_rank, mention_pattern
from bookmarks.errors import ModelError, StructuredOutputError
from bookmarks.memory import (
    BehavioralContent,
    BehavioralExample,
    Bookmark,
    ConceptContent,
    StateContent,
    StateNode,
)
from bookmarks.models.llm import LLM
from bookmarks.models.transport import RequestRefusedError

WINDOW = 8
MAX_WINDOWS = 8  # windows per concept call
MAX_CONCEPT_CALLS = 3  # the most concept refinements one sync makes (densest windows first)
CONCEPT_TOKENS = 220
STATE_TOKENS = 160
BEHAVIORAL_TOKENS = 80
STATE_BLOCK = 64
FILTER_BATCH = 16
MAX_CANDIDATES = 256


class StateDecision(BaseModel):
    decision: Literal["unchanged", "refine", "append"]
    text: str = Field(default="", max_length=2000)


class FirstState(BaseModel):
    text: str = Field(min_length=1, max_length=2000)


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
    stalled: str = ""  # why the sync stopped before p_new (it then ends at an earlier block)

    def stall(self, at: int, why: str) -> None:
        """Keep what was done: the checkpoint becomes `at` (the last fully read action)."""
        self.p_new, self.stalled = max(self.p_old, at), why
        self.actions_read = self.p_new - self.p_old


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


def _failure(exc: ModelError) -> str:
    """Why a sync stops at its last good block: a reply that stayed invalid, or a request
    the server refused as it was (too long, malformed). A server that is down, or refuses
    the key or the model, fails the step: nothing could be synchronized anyway."""
    if isinstance(exc, StructuredOutputError) or (
            isinstance(exc, RequestRefusedError) and exc.status in (400, 413, 422)):
        return str(exc)
    raise exc


def _finish(result: SyncResult, llm: LLM, kind: str, calls_wo: float, costs: CostModel,
            target: int | None = None, title: str = "") -> SyncResult:
    if title:
        report(title, done=True)
    if result.stalled and target is not None:
        result.events.append({"kind": "sync_stalled", "p": result.p_new,
                              "behind": target - result.p_new, "reason": result.stalled[:300]})
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
    """Refine the description from windows around the subject's mentions in the suffix.

    Windows are at most 2·WINDOW+1 actions (a lead character's mentions never become one
    window over the whole suffix); the densest and most recent are chosen, as many as fit
    MAX_CONCEPT_CALLS prompts of the model's budget, and read in story order, one
    refinement call per prompt-full."""
    content: ConceptContent = bm.content.model_copy(deep=True)  # type: ignore[assignment]
    content.keys = content.keys or keys
    result = SyncResult(content, bm.p, p_new, len(suffix))
    pattern = mention_pattern(content.keys)
    hits = [n for n, ln in enumerate(suffix) if pattern and pattern.search(f"{ln.character} {ln.text}")]
    budget = llm.prompt_chars(CONCEPT_TOKENS, reserve=1200 + len(content.description))
    calls = _concept_calls(suffix, hits, budget)
    for k, call in enumerate(calls, start=1):
        report(bm.title, type="concept", unit="call", step=k, steps=len(calls),
               read=suffix[call[0][0]].index - bm.p - 1, total=len(suffix))
        passages = [suffix[a:b + 1] for a, b in call]
        try:
            reply = await llm.text(
                prompts.concept(story=story, title=bm.title, subject=bm.subject,
                                current=content.description, p=bm.p, pinned=bm.pinned,
                                windows=passages),
                purpose="sync:concept", bookmark_id=bm.id, max_tokens=CONCEPT_TOKENS)
        except ModelError as exc:
            result.stall(suffix[call[0][0]].index - 1, _failure(exc))
            break
        text = _whole_sentences(reply.text.strip()) if reply.finish_reason == "length" \
            else reply.text.strip()
        if echoes_prompt(text):  # not a description: keep the last good one, stop here
            result.stall(suffix[call[0][0]].index - 1, "the reply was not a description "
                         f"(JSON, or the prompt's own words): {text[:120]!r}")
            break
        if text:
            content.description = _keep_pinned(bm, content.description, text)
        content.evidence = (content.evidence + [suffix[h].index for h in hits
                                                if any(a <= h <= b for a, b in call)])[-32:]
    return _finish(result, llm, "concept", max(len(calls), 1 if (hits or mentioned_before) else 0),
                   costs, p_new, bm.title)


def _concept_calls(suffix: list[IndexedLine], hits: list[int],
                   budget: int) -> list[list[tuple[int, int]]]:
    """The windows to read, grouped into calls of at most `budget` characters, in story order."""
    if not hits:
        return []
    windows = _windows(hits, len(suffix))
    size = {w: sum(len(prompts.line_text(ln)) + 1 for ln in suffix[w[0]:w[1] + 1]) + 4
            for w in windows}
    ranked = sorted(windows, key=lambda w: (-sum(w[0] <= h <= w[1] for h in hits), -w[0]))
    room = MAX_CONCEPT_CALLS * budget
    chosen = []
    for w in ranked:
        if len(chosen) >= MAX_CONCEPT_CALLS * MAX_WINDOWS or size[w] > room and chosen:
            continue
        chosen.append(w)
        room -= min(size[w], budget)
    calls: list[list[tuple[int, int]]] = []
    used = 0
    for w in sorted(chosen):
        if not calls or len(calls[-1]) >= MAX_WINDOWS or used + size[w] > budget:
            calls.append([])
            used = 0
        calls[-1].append(w)
        used += size[w]
    return calls[:MAX_CONCEPT_CALLS]


def _windows(hits: list[int], n: int, span: int = 2 * WINDOW + 1) -> list[tuple[int, int]]:
    """±WINDOW windows (positions in the suffix) around the mentions; overlapping ones
    merge, but no window is longer than `span` actions."""
    merged: list[list[int]] = []
    for h in hits:
        a, b = max(0, h - WINDOW), min(n - 1, h + WINDOW)
        if merged and a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    out = []
    for a, b in merged:
        out.extend((x, min(b, x + span - 1)) for x in range(a, b + 1, span))
    return out


def _whole_sentences(text: str) -> str:
    """A reply cut at max_tokens, ended at its last full sentence."""
    cut = max(text.rfind(p) for p in (". ", "! ", "? ", ".\n"))
    return text[:cut + 1] if cut > 40 else text


def _keep_pinned(bm: Bookmark, old: str, new: str) -> str:
    """A pinned text is the user's: the sync may add to it, never drop it."""
    if bm.pinned and old and old not in new:
        return f"{old}\n{new}"
    return new


async def sync_state(bm: Bookmark, suffix: list[IndexedLine], *, llm: LLM, story: str,
                     p_new: int, costs: CostModel, block: int = STATE_BLOCK) -> SyncResult:
    """Per block (at most `block` actions that fit the model's budget): unchanged, refine or
    append a node. With no node yet, the first block always creates one. A block that
    cannot be synchronized ends the sync at the block before it (a checkpoint)."""
    content: StateContent = bm.content.model_copy(deep=True)  # type: ignore[assignment]
    result = SyncResult(content, bm.p, p_new, len(suffix))
    chars = llm.prompt_chars(STATE_TOKENS)
    start = 0
    while start < len(suffix):
        node = content.nodes[-1] if content.nodes else None
        room = chars - (len(node.text) if node else 0)
        chunk = prompts.pack(suffix[start:start + block], room, newest=False)
        first, last = chunk[0].index, chunk[-1].index
        report(bm.title, type="state", unit="block", step=start // block + 1,
               steps=math.ceil(len(suffix) / block), read=start, total=len(suffix))
        try:
            if node is None:
                made = await llm.structured(
                    prompts.first_state(story=story, title=bm.title, subject=bm.subject,
                                        block=chunk),
                    FirstState, purpose="sync:state", bookmark_id=bm.id, max_tokens=STATE_TOKENS,
                    check=_non_blank)
                kind, text = "append", made.text.strip()
            else:
                decision = await llm.structured(
                    prompts.state(story=story, title=bm.title, subject=bm.subject,
                                  node=node.text, node_range=f"actions {node.start}–{node.end}",
                                  block=chunk),
                    StateDecision, purpose="sync:state", bookmark_id=bm.id,
                    max_tokens=STATE_TOKENS)
                kind, text = decision.decision, decision.text.strip()
        except ModelError as exc:
            result.stall(first - 1, _failure(exc))
            break
        start += len(chunk)
        if kind != "unchanged" and not _says_something(text):
            kind = "unchanged"  # an empty text, or a decision word written as the state
        if kind == "refine" and bm.pinned:
            kind = "append"  # the user's pinned node stays as written
        if kind == "unchanged":
            content.nodes[-1] = node.model_copy(update={"end": last})  # type: ignore[union-attr]
            continue
        if kind == "refine":
            content.nodes[-1] = StateNode(text=text, start=node.start, end=last)  # type: ignore[union-attr]
            result.events.append({"kind": "state_refined", "before": node.text, "after": text,  # type: ignore[union-attr]
                                  "range": [node.start, last]})  # type: ignore[union-attr]
        else:
            content.nodes.append(StateNode(text=text, start=first, end=last))
            result.events.append({"kind": "state_appended", "before": node.text if node else "",
                                  "after": text, "range": [first, last]})
    blocks_wo = math.ceil(result.p_new / block) if result.p_new else 0
    return _finish(result, llm, "state", blocks_wo, costs, p_new, bm.title)


_NOT_A_STATE = frozenset({"", "unchanged", "refine", "append", "none", "n/a", "na", "null",
                          "nothing", "no change", "same", "(nothing recorded yet)"})


def _says_something(text: str) -> bool:
    """A state text, not a decision word or a placeholder ("unchanged", "none")."""
    return text.strip().strip(".!\"'").casefold() not in _NOT_A_STATE


def _non_blank(value: FirstState) -> None:
    if not _says_something(value.text):
        raise ValueError("text: describe the state in words, not a decision or a placeholder")


async def sync_behavioral(bm: Bookmark, suffix: list[IndexedLine], *, llm: LLM, story: str,
                          subject_keys: set[str], p_new: int, costs: CostModel,
                          subject_actions_before: int, options: SyncOptions,
                          preceding: list[IndexedLine] | None = None) -> SyncResult:
    """Filter the subject's own actions in the suffix, in batches that fit the model's
    budget; each kept example keeps the scene just before it, read from the lineage
    (`preceding`: the lines just before the suffix, for its first actions)."""
    content: BehavioralContent = bm.content.model_copy(deep=True)  # type: ignore[assignment]
    result = SyncResult(content, bm.p, p_new, len(suffix))
    lead = list(preceding or [])[-2:]
    lines = lead + suffix
    candidates = [(n + len(lead), ln) for n, ln in enumerate(suffix)
                  if ln.character.casefold() in subject_keys]
    if len(candidates) > options.max_candidates:  # keep the most relevant to the section
        ranked = bm25_rank(bm.title, [ln.text for _, ln in candidates])
        keep = {pos for pos, _ in ranked[: options.max_candidates]}
        rest = [k for k in range(len(candidates) - 1, -1, -1) if k not in keep]
        keep |= set(rest[: options.max_candidates - len(keep)])
        candidates = [c for k, c in enumerate(candidates) if k in keep]
    budget = llm.prompt_chars(BEHAVIORAL_TOKENS)
    start = 0
    while start < len(candidates):
        batch: list[tuple[int, IndexedLine]] = []
        shown: list[tuple[str, str]] = []
        used = 0
        for n, ln in candidates[start:start + options.filter_batch]:
            item = (_before(lines, n), prompts.clip(ln.text, 600))
            used += sum(map(len, item)) + 24
            if batch and used > budget:
                break
            batch.append((n, ln))
            shown.append(item)

        report(bm.title, type="behavioral", unit="batch",
               step=start // options.filter_batch + 1,
               steps=math.ceil(len(candidates) / options.filter_batch),
               read=batch[0][1].index - bm.p - 1, total=len(suffix))

        def check(k: Keep, size: int = len(batch)) -> None:
            bad = [x for x in k.keep if not 1 <= x <= size]
            if bad:
                raise ValueError(f"numbers must be between 1 and {size}, not {bad}")

        try:
            keep = await llm.structured(
                prompts.behavioral(story=story, title=bm.title, subject=bm.subject, candidates=shown),
                Keep, purpose="sync:behavioral", bookmark_id=bm.id, max_tokens=BEHAVIORAL_TOKENS,
                check=check)
        except ModelError as exc:
            result.stall(batch[0][1].index - 1, _failure(exc))
            break
        start += len(batch)
        have = {e.index for e in content.examples}
        for x in sorted(set(keep.keep)):
            n, ln = batch[x - 1]
            if ln.index not in have:
                content.examples.append(BehavioralExample(index=ln.index, action=ln.text,
                                                          scene=shown[x - 1][0]))
    total = min(subject_actions_before, options.max_candidates)
    return _finish(result, llm, "behavioral", math.ceil(total / options.filter_batch), costs,
                   p_new, bm.title)


def _before(lines: list[IndexedLine], n: int) -> str:
    """The scene just before position n, short (the two previous lines)."""
    prev = lines[max(0, n - 2):n]
    return " / ".join(f"{ln.character}: {ln.text}"[:160] for ln in prev) or "(start)"
