"""The Bookmarks grounder: propose → match → synchronize (concurrently) → ground.

See the paper (active grounding with checkpointed passive updating) and DESIGN.md §2.
"""

from __future__ import annotations

import asyncio
import re
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
from bookmarks.engine.joint_sync import AUTO, SEPARATE, resolve_mode, tidy
from bookmarks.engine.matching import match_all
from bookmarks.engine.recall import new_bookmark, visible_bookmarks
from bookmarks.engine.step_sync import bring_step
from bookmarks.engine.sync import (
    CostModel,
    SyncOptions,
    SyncResult,
    sync_behavioral,
    sync_concept,
    sync_state,
)
from bookmarks.engine.tasks import gather_all
from bookmarks.engine.textsearch import bm25_rank, mention_pattern
from bookmarks.errors import StructuredOutputError
from bookmarks.memory import BOOKMARK_TYPES, BehavioralContent, Bookmark, render_concept, render_state
from bookmarks.models.llm import LLM
from bookmarks.store import Store
from bookmarks.stories.story import PSEUDO_CHARACTERS, Character

FALLBACK_SECTIONS = 3  # at most this many fallback sections (and never over the budget)
RECENT = 6  # the proposal lists the sections used most recently,
OWN = 6  # and after them this many more about the character who acts


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
    sync_mode: str = AUTO  # joint | prefix | separate; auto: see joint_sync.resolve_mode


@dataclass
class Step:
    """A prediction's proposals and matches, before its bookmarks are synchronized."""

    p_new: int
    cast: list[Character]
    existing: list[Bookmark]
    meter: LLM
    events: list[dict]
    writes: MemoryWrites
    selected: list[Bookmark]


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
        step = await self.select(req)
        return self.conclude(req, step, await self.bring_forward(req, step))

    async def select(self, req: GroundRequest, existing: list[Bookmark] | None = None) -> Step:
        """Propose and match: the bookmarks this prediction grounds on (`existing`: the
        bookmarks visible here, when a caller plans several steps before any commits)."""
        await self.memory.discover_context()  # prompts are packed to the model's window
        p_new = req.position - 1
        cast = self.store.characters(req.story_id)
        existing = self._recall(req, p_new) if existing is None else existing
        meter = self.memory.metered()
        events: list[dict] = []
        sections = await self._propose(req, existing, cast, meter, events)
        events[:0] = [{"kind": "proposed", "title": s.title, "type": s.type,
                       "subject": s.subject} for s in sections]
        writes = MemoryWrites()
        selected = await self._match(req, sections, existing, meter, events, writes)
        return Step(p_new, cast, existing, meter, events, writes, selected)

    async def bring_forward(self, req: GroundRequest, step: Step) -> list[SyncResult]:
        """Synchronize the selected bookmarks to the prediction's point: block-major (each
        block read once for all of them; see joint_sync.py), or each on its own."""
        mode = resolve_mode(self.memory, self.options.sync_mode)
        if mode != SEPARATE:
            return await bring_step(self.store, self.memory, req, step.selected, mode=mode,
                                    keys=lambda subject: _keys(subject, step.cast),
                                    max_read=self.options.max_read, costs=self.costs,
                                    block=self.options.sync.state_block,
                                    concurrency=self.options.concurrency)
        sem = asyncio.Semaphore(max(1, self.options.concurrency))
        return await gather_all(*(self._sync(req, bm, step.cast, step.p_new, sem)
                                  for bm in step.selected))

    def conclude(self, req: GroundRequest, step: Step, results: list[SyncResult]) -> Grounding:
        """Record the synchronizations and compose the grounding."""
        opts, selected, existing, cast = self.options, step.selected, step.existing, step.cast
        events, writes, meter, p_new = step.events, step.writes, step.meter, step.p_new
        length = req.lineage.length(self.store)
        for bm, res in zip(selected, results, strict=True):
            self._record(req, bm, res, events, writes, length)
            for key in ("calls", "prompt_tokens", "completion_tokens"):
                meter.usage[key] = tidy(meter.usage[key] + getattr(res, key))  # call shares
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
                       llm: LLM, events: list[dict]) -> list[Section]:
        """The sections to ground on. A proposal still invalid after its re-ask is repaired
        (pronouns and short names resolved through the cast, invalid sections dropped);
        when nothing valid is left, the fallback sections stand in (a `fallback` event)."""
        ordered = sorted((b for b in existing if b.version_id), key=lambda b: (-b.p, b.id or 0))
        recent = ordered[:RECENT]
        # and the character's own, so a title can be asked for again (reused without a call)
        own = [b for b in ordered[RECENT:] if _concerns(b, req.character, cast)][:OWN]
        recent_titles, own_titles = ([f"{b.title} ({b.type}, about {b.subject})" for b in bms]
                                     for bms in (recent, own))
        parsed: list[Proposals] = []  # every reply that parsed, valid or not

        def check(value: Proposals) -> None:
            parsed.append(value)
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
        failed = ""
        try:
            proposals: Proposals | None = await llm.structured(
                prompts.propose(title=req.story_title, cast=known,
                                types=tuple(t for t in BOOKMARK_TYPES
                                            if t not in self.options.exclude_types),
                                character=req.character, scene=req.scene, recent=recent_titles,
                                own=own_titles, budget=self.options.budget),
                Proposals, purpose="propose", scene_id=req.scene_id,
                max_tokens=90 * self.options.budget, check=check)
        except StructuredOutputError as exc:  # still invalid after the re-ask: degrade
            proposals, failed = (parsed[-1] if parsed else None), str(exc)
        raw = proposals.sections if proposals else []
        out, repaired = self._repair(raw, cast, req, fix=bool(failed))
        if repaired:
            events.append({"kind": "repaired", "step": "propose", "changes": repaired})
        if not out and (raw or failed):
            out = self._fallback_sections(req, cast)
            events.append({"kind": "fallback", "step": "propose",
                           "outcome": "fallback sections: " + "; ".join(s.title for s in out),
                           "reason": (failed or "no proposed section was valid")[:300]})
        elif failed:
            events.append({"kind": "fallback", "step": "propose",
                           "outcome": "repaired proposal: " + "; ".join(s.title for s in out),
                           "reason": failed[:300]})
        return out

    def _repair(self, raw: list[Section], cast: list[Character], req: GroundRequest,
                fix: bool) -> tuple[list[Section], list[dict]]:
        """The valid sections of a proposal (at most the budget, no duplicates); with `fix`
        (a proposal still invalid after its re-ask) invalid ones are first repaired where
        the cast tells how. What was changed or dropped, and why."""
        out: list[Section] = []
        changes: list[dict] = []
        seen: set[str] = set()
        for s in raw:
            if s.type in self.options.exclude_types:
                changes.append({"title": s.title, "dropped": f"{s.type} is not offered"})
                continue
            subject = _canonical(s.subject, cast, req.character, s.type)
            title = " ".join(s.title.split())
            if fix and not _usable_title(title):
                if subject.casefold() in _PERSONS:  # "he", "her": the one who acts next
                    subject = req.character
                title = resolve_pronouns(full_names(title, cast), subject, cast,
                                         req.character) or title
                if _usable_title(title):
                    changes.append({"title": s.title, "to": title})
            if not _usable_title(title):
                changes.append({"title": s.title, "dropped": "pronouns, or not a descriptive "
                                                             "title"})
                continue
            key = f"{s.type}|{subject.casefold()}|{title.casefold()}"
            if key not in seen:
                seen.add(key)
                out.append(Section(title=title, type=s.type, subject=subject))
        return out[: self.options.budget], changes

    def _fallback_sections(self, req: GroundRequest, cast: list[Character]) -> list[Section]:
        """Sections that always make sense for the character about to act: their current
        goal and state, who the people present with them are, how they speak and act —
        the same titles every time, so later fallbacks reuse them."""
        c = req.character
        names = {x.name for x in cast}
        others: list[str] = []
        for who in [ln.character for ln in reversed(req.scene)] + list(req.scene_cast):
            if who in names and who != c and who not in PSEUDO_CHARACTERS and who not in others:
                others.append(who)
        options = [Section(title=f"{c}'s current goal and state", type="state", subject=c)]
        options += [Section(title=f"Who {o} is", type="concept", subject=o) for o in others[:1]]
        options.append(Section(title=f"How {c} speaks and acts", type="behavioral", subject=c))
        options += [Section(title=f"Who {o} is", type="concept", subject=o) for o in others[1:]]
        options.append(Section(title=f"Who {c} is", type="concept", subject=c))
        allowed = [s for s in options if s.type not in self.options.exclude_types]
        return allowed[: min(self.options.budget, FALLBACK_SECTIONS)]

    async def _match(self, req: GroundRequest, sections: list[Section], existing: list[Bookmark],
                     llm: LLM, events: list[dict], writes: MemoryWrites) -> list[Bookmark]:
        known = self.store.match_decisions(req.story_id, req.space)
        outcomes = await match_all([(s.title, s.type, s.subject) for s in sections], existing,
                                   llm=llm, known=known, story_id=req.story_id, space=req.space)
        selected: list[Bookmark] = []
        for s, outcome in zip(sections, outcomes, strict=True):
            writes.decisions.extend(outcome.decisions)
            bm = outcome.bookmark
            if bm is not None and any(bm is b for b in selected):
                events.append({"kind": "collapsed", "bookmark": bm, "title": s.title,
                               "into": bm.title})
                continue
            if outcome.fallback:
                events.append({"kind": "fallback", "step": "match", "bookmark": bm,
                               "title": s.title, "outcome": f"reused “{bm.title}” without a "
                               "valid decision", "reason": outcome.fallback[:300]})
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
                       "mode": getattr(res, "mode", SEPARATE), "shared": getattr(res, "shared", 0),
                       "actions_read_wo": res.actions_read_wo, "calls_wo": res.calls_wo,
                       "tokens_wo": res.prompt_tokens_wo + res.completion_tokens_wo,
                       "stalled": res.stalled[:300]})
        events.extend({**e, "bookmark": bm, "title": bm.title} for e in res.events)
        if res.stalled:  # the prediction goes on with the last good version
            behind = next((e["behind"] for e in res.events if e["kind"] == "sync_stalled"), 0)
            events.append({"kind": "fallback", "step": "sync", "bookmark": bm, "title": bm.title,
                           "outcome": f"kept the version as of action {res.p_new} "
                                      f"({behind} actions behind)", "reason": res.stalled[:300]})
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


_GROUPS = ({"he", "him", "his", "himself"}, {"she", "her", "hers", "herself"},
           {"they", "them", "their", "theirs", "themselves"}, {"i", "me", "my", "mine", "myself"},
           {"you", "your", "yours", "yourself"}, {"we", "us", "our", "ours"})
_PERSONS = frozenset().union(*_GROUPS)
_POSSESSIVE = frozenset({"his", "hers", "their", "theirs", "my", "mine", "your", "yours", "our",
                         "ours"})
_HONORIFICS = frozenset("sir lady lord king queen prince princess duke mr mrs miss ms dr doctor "
                        "captain master mistress father mother brother sister the old young "
                        "saint st".split())


def resolve_pronouns(title: str, subject: str, cast: list[Character], character: str) -> str | None:
    """The title with its personal pronouns replaced by the person they stand for — the
    section's subject when it is one of the cast, else the character about to act ("his
    plan" → "Hamlet's plan"); None when they cannot stand for one person (two kinds of
    pronoun, or "it", which names no one)."""
    who = subject if subject in {c.name for c in cast} else character
    words = title.split()
    bare = [w.strip(".,;:!?\"'()").casefold() for w in words]
    if len({n for b in bare for n, g in enumerate(_GROUPS) if b in g}) > 1 \
            or {"it", "its", "itself"} & set(bare):
        return None
    out = []
    for k, (w, b) in enumerate(zip(words, bare, strict=True)):
        if b in _POSSESSIVE or b == "her" and k + 1 < len(words):
            out.append(f"{who}'s")
        elif b in _PERSONS:
            out.append(who)
        else:
            out.append(w)
    text = " ".join(out)
    return text[:1].upper() + text[1:]


def full_names(title: str, cast: list[Character]) -> str:
    """Short names in a title written out in full through the cast: an alias, or a part of
    one character's name that no other name has ("Jack's plan" → "Jack Harrow's plan")."""
    short: dict[str, str] = {}
    for c in cast:
        for alias in c.aliases:
            if alias.casefold() != c.name.casefold():
                short.setdefault(alias, c.name)
        for part in c.name.split():
            if len(part) >= 3 and part[:1].isupper() and part.casefold() not in _HONORIFICS \
                    and sum(part in o.name.split() for o in cast) == 1 and part != c.name:
                short.setdefault(part, c.name)
    for name, full in sorted(short.items(), key=lambda kv: -len(kv[0])):
        spans = [(m.start(), m.end()) for c in cast
                 for m in re.finditer(re.escape(c.name), title, re.IGNORECASE)]
        for m in reversed(list(re.finditer(rf"(?<![\w'’]){re.escape(name)}(?!\w)", title))):
            if not any(a <= m.start() < b for a, b in spans):
                title = title[:m.start()] + full + title[m.end():]
    return title
