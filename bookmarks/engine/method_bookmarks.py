"""The Bookmarks grounder: propose → match → synchronize (concurrently) → ground.

See the paper (active grounding with checkpointed passive updating) and DESIGN.md §2.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from bookmarks.engine import prompts
from bookmarks.engine.cards import active
from bookmarks.engine.grounding import (
    DEFAULT_TOKEN_BUDGET,
    Grounding,
    GroundRequest,
    MemoryWrites,
    Piece,
    VersionWrite,
    compose,
    grounded_event,
)
from bookmarks.engine.matching import match
from bookmarks.engine.recall import new_bookmark, visible_bookmarks
from bookmarks.engine.sync import (
    CostModel,
    SyncOptions,
    SyncResult,
    sync_behavioral,
    sync_concept,
    sync_state,
)
from bookmarks.engine.textsearch import bm25_rank, mention_pattern
from bookmarks.memory import BOOKMARK_TYPES, BehavioralContent, Bookmark, render_concept, render_state
from bookmarks.models.llm import LLM
from bookmarks.store import Store
from bookmarks.stories.story import Character


class Section(BaseModel):
    title: str = Field(max_length=200)
    type: Literal["concept", "state", "behavioral"]
    subject: str = Field(default="", max_length=120)  # empty: the acting character


class Proposals(BaseModel):
    # an empty list is a valid answer: no memory section is needed for this action
    sections: list[Section] = Field(max_length=8)


@dataclass
class BookmarksOptions:
    budget: int = 3
    token_budget: int = DEFAULT_TOKEN_BUDGET
    nearby_window: int = 5  # also ground on c's bookmarks synced this close before i
    # Play's "partial memory": a bookmark that would read more than this many actions is
    # not synchronized in this turn (its view stays at its checkpoint; background work
    # catches up). 0: always synchronize (evaluations always do).
    max_read: int = 0
    # ablation: section types this grounder may not use (the proposal never offers them)
    exclude_types: tuple[str, ...] = ()
    concurrency: int = 4
    top_examples: int = 8
    sync: SyncOptions = field(default_factory=SyncOptions)


def _usable_title(title: str) -> bool:
    """A noun phrase of a few words without pronouns (not "Title" or "his plan")."""
    words = title.split()
    return (len(title.strip()) >= 4 and title.strip().casefold() not in {"title", "section"}
            and not any(w.strip(".,'\"!?").casefold() in prompts.PRONOUNS for w in words))


class BookmarksGrounder:
    name = "bookmarks"

    def __init__(self, store: Store, memory: LLM, options: BookmarksOptions | None = None,
                 costs: CostModel | None = None):
        self.store = store
        self.memory = memory
        self.options = options or BookmarksOptions()
        self.costs = costs or CostModel()

    async def ground(self, req: GroundRequest) -> Grounding:
        opts = self.options
        await self.memory.discover_context()  # prompts are packed to the model's window
        p_new = req.position - 1
        cast = self.store.characters(req.story_id)
        existing = self._recall(req, p_new)
        meter = self.memory.metered()
        sections = await self._propose(req, existing, cast, meter)
        events: list[dict] = [{"kind": "proposed", "title": s.title, "type": s.type,
                               "subject": s.subject} for s in sections]
        writes = MemoryWrites()
        selected = await self._match(req, sections, existing, meter, events, writes)
        sem = asyncio.Semaphore(max(1, opts.concurrency))
        results = await asyncio.gather(*(self._sync(req, bm, cast, p_new, sem) for bm in selected))
        length = req.lineage.length(self.store)
        for bm, res in zip(selected, results, strict=True):
            self._record(req, bm, res, events, writes, length)
            for key in ("calls", "prompt_tokens", "completion_tokens"):
                meter.usage[key] += getattr(res, key)
        pieces = [self._view(b, req) for b in selected]
        chosen = {id(b) for b in selected}
        nearby = [b for b in existing if id(b) not in chosen and b.version_id
                  and b.p >= p_new - opts.nearby_window and _concerns(b, req.character, cast)]
        pieces += [self._view(b, req) for b in nearby]
        # a character card's memory and lorebook entries ground without being proposed:
        # the card's own when its character acts, an entry when its keys are mentioned
        scene_text = "\n".join(f"{ln.character} {ln.text}" for ln in req.scene[-6:])
        lore = [b for b in existing if b.activation and id(b) not in chosen
                and all(b is not n for n in nearby) and active(b, req.character, scene_text)]
        events += [{"kind": "lore", "bookmark": b, "title": b.title, "activation": b.activation}
                   for b in lore]
        pieces = [self._view(b, req) for b in lore if b.activation == "self"] + pieces \
            + [self._view(b, req) for b in lore if b.activation != "self"]
        text, kept = compose(pieces, opts.token_budget)
        events.append(grounded_event(text, kept))
        return Grounding(method=self.name, text=text, pieces=kept, events=events, writes=writes,
                         usage=dict(meter.usage))

    def _recall(self, req: GroundRequest, p_new: int) -> list[Bookmark]:
        return visible_bookmarks(self.store, req.story_id, req.space, req.lineage, p_new)

    async def _propose(self, req: GroundRequest, existing: list[Bookmark], cast: list[Character],
                       llm: LLM) -> list[Section]:
        recent = sorted((b for b in existing if b.version_id), key=lambda b: (-b.p, b.id or 0))[:6]
        recent_titles = [f"{b.title} ({b.type}, about {b.subject})" for b in recent]

        def check(value: Proposals) -> None:
            if value.sections and not any(_usable_title(s.title) for s in value.sections):
                raise ValueError("titles must be descriptive noun phrases with full names, "
                                 "without pronouns")

        first = self.store.first_appearances(req.story_id)
        present = {ln.character for ln in req.scene} | set(req.scene_cast) | {req.character}
        limit = min(req.position - 1, req.lineage.cutoffs[req.lineage.trunk_id])
        if req.witness is not None:  # only those this character has met
            met = {who for idx, who, _ in self.store.action_tuples(req.story_id, 1, limit)
                   if req.witness.sees(idx)}
            known = [c.name for c in cast if c.name in met or c.name in present]
        else:
            known = [c.name for c in cast
                     if first.get(c.name, limit + 1) <= limit or c.name in present]
        proposals = await llm.structured(
            prompts.propose(title=req.story_title, cast=known,
                            types=tuple(t for t in BOOKMARK_TYPES
                                        if t not in self.options.exclude_types),
                            character=req.character, scene=req.scene, recent=recent_titles,
                            budget=self.options.budget),
            Proposals, purpose="propose", scene_id=req.scene_id, max_tokens=90 * self.options.budget,
            check=check)
        out: list[Section] = []
        seen: set[str] = set()
        for s in proposals.sections:
            if not _usable_title(s.title) or s.type in self.options.exclude_types:
                continue
            subject = _canonical(s.subject, cast, req.character, s.type)
            key = f"{s.type}|{subject.casefold()}|{' '.join(s.title.casefold().split())}"
            if key not in seen:
                seen.add(key)
                out.append(Section(title=" ".join(s.title.split()), type=s.type, subject=subject))
        return out[: self.options.budget]

    async def _match(self, req: GroundRequest, sections: list[Section], existing: list[Bookmark],
                     llm: LLM, events: list[dict], writes: MemoryWrites) -> list[Bookmark]:
        known = self.store.match_decisions(req.story_id, req.space)
        outcomes = await asyncio.gather(*(
            match(s.title, s.type, s.subject, existing, llm=llm, known=known,
                  story_id=req.story_id, space=req.space) for s in sections))
        selected: list[Bookmark] = []
        for s, outcome in zip(sections, outcomes, strict=True):
            writes.decisions.extend(outcome.decisions)
            bm = outcome.bookmark
            if bm is not None and any(bm is b for b in selected):
                events.append({"kind": "collapsed", "bookmark": bm, "title": s.title,
                               "into": bm.title})
                continue
            if bm is None:
                bm = new_bookmark(req.story_id, req.space, s.subject, s.type, s.title, self.store)
                if bm.id is None:
                    writes.new_bookmarks.append(bm)
                events.append({"kind": "initialized", "bookmark": bm, "title": bm.title,
                               "type": s.type, "subject": s.subject, "p": 0})
            else:
                events.append({"kind": "reused", "bookmark": bm, "title": bm.title,
                               "proposed_title": s.title, "type": bm.type, "subject": bm.subject,
                               "from_p": bm.p, "asked": outcome.asked})
            selected.append(bm)
        return selected

    async def _sync(self, req: GroundRequest, bm: Bookmark, cast: list[Character], p_new: int,
                    sem: asyncio.Semaphore) -> SyncResult:
        async with sem:
            llm = self.memory.metered()
            if self.options.max_read and p_new - bm.p > self.options.max_read:
                deferred = SyncResult(bm.content, bm.p, bm.p, 0)
                deferred.events.append({"kind": "sync_deferred", "p": bm.p, "behind": p_new - bm.p})
                return deferred
            suffix = req.visible(req.lineage.lines(self.store, bm.p + 1, p_new)) \
                if p_new > bm.p else []
            kw = {"llm": llm, "story": req.story_title, "p_new": max(p_new, bm.p), "costs": self.costs}
            keys = _keys(bm.subject, cast)
            if bm.type == "concept":
                return await sync_concept(bm, suffix, keys=keys,
                                          mentioned_before=bool(bm.content.evidence), **kw)
            if bm.type == "state":
                return await sync_state(bm, suffix, block=self.options.sync.state_block, **kw)
            before = req.lineage.count_by(self.store, keys, p_new) if suffix else 0
            preceding = req.visible(req.lineage.lines(self.store, max(1, bm.p - 8), bm.p)) \
                if suffix else []
            return await sync_behavioral(bm, suffix, subject_keys={k.casefold() for k in keys},
                                         subject_actions_before=before, preceding=preceding,
                                         options=self.options.sync, **kw)

    def _record(self, req: GroundRequest, bm: Bookmark, res: SyncResult, events: list[dict],
                writes: MemoryWrites, story_length: int) -> None:
        if res.p_new > res.p_old or bm.id is None:
            writes.versions.append(VersionWrite(bm, req.lineage.branch_id, res.p_new, res.content))
        writes.costs.append({
            "story_id": req.story_id, "space": req.space, "branch_id": req.lineage.branch_id,
            "bookmark": bm, "method": self.name, "type": bm.type, "position": req.position,
            "story_length": story_length, "p_old": res.p_old,
            "p_new": res.p_new, "actions_read": res.actions_read, "calls": res.calls,
            "prompt_tokens": res.prompt_tokens, "completion_tokens": res.completion_tokens,
            "actions_read_wo": res.actions_read_wo, "calls_wo": res.calls_wo,
            "prompt_tokens_wo": res.prompt_tokens_wo,
            "completion_tokens_wo": res.completion_tokens_wo})
        events.append({"kind": "synchronized", "bookmark": bm, "title": bm.title, "type": bm.type,
                       "p_old": res.p_old, "p_new": res.p_new, "actions_read": res.actions_read,
                       "calls": res.calls, "prompt_tokens": res.prompt_tokens,
                       "completion_tokens": res.completion_tokens,
                       "actions_read_wo": res.actions_read_wo, "calls_wo": res.calls_wo,
                       "tokens_wo": res.prompt_tokens_wo + res.completion_tokens_wo,
                       "stalled": res.stalled[:300]})
        events.extend({**e, "bookmark": bm, "title": bm.title} for e in res.events)
        bm.content, bm.p = res.content, res.p_new

    def _view(self, bm: Bookmark, req: GroundRequest) -> Piece:
        # which bookmark and checkpoint each piece comes from ("new" until committed)
        label = f"{bm.title} (#{bm.id or 'new'}, {bm.type}, as of action {bm.p})"
        if bm.type == "concept":
            text, evidence = render_concept(bm.content)  # type: ignore[arg-type]
        elif bm.type == "state":
            text, evidence = render_state(bm.content)  # type: ignore[arg-type]
        else:
            text, evidence = _behavioral_view(bm.content, bm.subject, req,  # type: ignore[arg-type]
                                              self.options.top_examples)
        return Piece(label=label, text=text, evidence=evidence, bookmark=bm)


class NoReuseGrounder(BookmarksGrounder):
    """The paper's "without reuse" ablation: every prediction starts from an empty memory
    (nothing is recalled, every section is synchronized from p = 0), all else equal. Its
    measured cost is what reuse saves; compare it with the counterfactual estimates."""

    name = "bookmarks-noreuse"

    def _recall(self, req: GroundRequest, p_new: int) -> list[Bookmark]:
        return []


def _behavioral_view(content: BehavioralContent, subject: str, req: GroundRequest,
                     top: int) -> tuple[str, list[int]]:
    examples = content.examples
    if not examples:
        return "", []
    query = " ".join(ln.text for ln in req.scene[-4:])
    ranked = [n for n, _ in bm25_rank(query, [f"{e.scene} {e.action}" for e in examples])]
    order = (ranked + [n for n in range(len(examples) - 1, -1, -1) if n not in ranked])[:top]
    lines = [f"- [{examples[n].index}] after \"{examples[n].scene[:120]}\" → {subject}: "
             f"{examples[n].action}" for n in order]
    return "\n".join(lines), [examples[n].index for n in order]


def _canonical(subject: str, cast: list[Character], character: str, kind: str) -> str:
    folded = " ".join(subject.casefold().split())
    if not folded:
        return character
    bare = folded.removesuffix("'s").removesuffix("’s")
    bare = bare.split(" ", 1)[1] if bare.split(" ", 1)[0] in ("the", "a", "an") and " " in bare \
        else bare
    for c in cast:  # a name or alias of the cast, with or without an article or 's
        if {folded, bare} & {k.casefold() for k in c.keys()}:
            return c.name
    if kind == "behavioral":
        return character  # behavioral sections are about a character
    return " ".join(subject.split())


def _keys(subject: str, cast: list[Character]) -> list[str]:
    for c in cast:
        if c.name == subject:
            return c.keys()
    return [subject]


def _concerns(bm: Bookmark, character: str, cast: list[Character]) -> bool:
    """Is the bookmark about this character (its subject, or a whole-word name in its title)?"""
    keys = _keys(character, cast)
    pattern = mention_pattern(keys)
    return bm.subject.casefold() in {k.casefold() for k in keys} or bool(
        pattern and pattern.search(bm.title))
