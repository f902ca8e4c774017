"""Match a proposed section to an existing bookmark, or decide it is new.

Candidates are bookmarks of the same type about the same subject (never across types):
subjects compare by their content words, so "the lamp" and "the lighthouse lamp" are
candidates for each other, and the model decides.
An identical title is reused outright — identical as the bookmark's identity compares it
(casefolded, whitespace collapsed, surrounding punctuation and quotes dropped: a "new"
answer could only re-initialize the same row), so it costs no model call; otherwise BM25
over titles recalls candidates, and the memory model is asked a one-word decision
(reuse / new) only for candidates above a score threshold, at most `MAX_ASKS` per
proposal. Decisions are remembered per
(proposal, candidate) so the same pair is never asked twice. The pairs one prediction
still has to decide are asked together (`match_all`: one pair, the one-word prompt;
several, one numbered question with an answer per pair), not one call per pair: each
proposal's candidates are still asked one after the other (the next only after a "new"),
the proposals' questions of a round in one call — the same pairs asked, in at most
`MAX_ASKS` calls a prediction.

A decision still invalid after its re-ask never fails the prediction: the candidate asked
about is reused. It is of the same type, about the same subject and shares at least
`MIN_OVERLAP` of the title's content words, so its memory concerns the section; reusing it
brings it forward from its checkpoint instead of synchronizing a near-duplicate from the
start. Such a fallback is reported (`MatchOutcome.fallback`) and not remembered as a
decision: the pair is asked again next time.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, create_model

from bookmarks.engine import prompts
from bookmarks.engine.textsearch import bm25_rank, overlap, tokens
from bookmarks.errors import StructuredOutputError
from bookmarks.memory import Bookmark
from bookmarks.models.llm import LLM
from bookmarks.store.memory_rows import identity_key

MAX_ASKS = 2
MIN_OVERLAP = 0.34  # share of content words in common before the model is asked


class Decision(BaseModel):
    decision: Literal["reuse", "new"]


@dataclass
class MatchOutcome:
    bookmark: Bookmark | None  # None: initialize a new bookmark
    asked: int
    decisions: list[dict]  # new (proposal, candidate) decisions to remember
    fallback: str = ""  # why the bookmark was reused without a valid decision


def same_subject(a: str, b: str) -> bool:
    """The same entity, as far as words tell: equal content words, or one subject's words
    all within the other's ("the lamp" / "the lighthouse lamp")."""
    ta, tb = set(tokens(a)), set(tokens(b))
    if not ta or not tb:
        return a.strip().casefold() == b.strip().casefold()
    return ta <= tb or tb <= ta


def proposal_key(kind: str, subject: str, title: str) -> str:
    return f"{kind}|{subject.casefold()}|{' '.join(title.casefold().split())}"


@dataclass
class _Plan:
    """One proposal's candidates to decide on, in rank order."""

    key: str
    outcome: MatchOutcome | None = None  # decided without asking (the same title)
    asks: list[Bookmark] = field(default_factory=list)
    answers: dict[int, str] = field(default_factory=dict)  # id(candidate) → asked now
    asked: int = 0

    def decision(self, b: Bookmark, known: dict[tuple[str, int], str]) -> str | None:
        found = known.get((self.key, b.id)) if b.id is not None else None
        return found or self.answers.get(id(b))

    def next_ask(self, known: dict[tuple[str, int], str]) -> Bookmark | None:
        """The candidate to ask about next, as one after the other (None: decided)."""
        if self.outcome is not None:
            return None
        for b in self.asks:
            decision = self.decision(b, known)
            if decision is None:
                return b
            if decision == "reuse":
                return None
        return None


def _plan(title: str, kind: str, subject: str, candidates: list[Bookmark]) -> _Plan:
    same = [b for b in candidates if b.type == kind and same_subject(b.subject, subject)]
    plan = _Plan(proposal_key(kind, subject, title))
    for b in same:  # the same title, compared as the bookmark's identity compares it
        if identity_key(b.title) == identity_key(title) and (
                tokens(b.subject) == tokens(subject)
                or identity_key(b.subject) == identity_key(subject)):
            plan.outcome = MatchOutcome(b, 0, [])
            return plan
    ranked = bm25_rank(title, [b.title for b in same])
    plausible = [same[n] for n, _ in ranked if overlap(title, same[n].title) >= MIN_OVERLAP]
    plan.asks = plausible[:MAX_ASKS]
    return plan


async def match(title: str, kind: str, subject: str, candidates: list[Bookmark], *,
                llm: LLM, known: dict[tuple[str, int], str], story_id: int,
                space: str) -> MatchOutcome:
    """One proposal matched (see `match_all`)."""
    (outcome,) = await match_all([(title, kind, subject)], candidates, llm=llm, known=known,
                                 story_id=story_id, space=space)
    return outcome


async def match_all(proposals: Sequence[tuple[str, str, str]], candidates: list[Bookmark], *,
                    llm: LLM, known: dict[tuple[str, int], str], story_id: int,
                    space: str) -> list[MatchOutcome]:
    """Each proposal (title, type, subject) matched to a candidate or to None (new). Each
    proposal's candidates are asked about one after the other, as many as it needs (the
    next only after a "new"), the proposals' questions of a round in one call: at most
    MAX_ASKS calls, each pair asked once. A reply still invalid after its re-ask reuses,
    for each proposal, the candidate it asked about (`fallback`)."""
    plans = [_plan(title, kind, subject, candidates) for title, kind, subject in proposals]
    new_decisions: list[list[dict]] = [[] for _ in plans]
    failed = ""
    while not failed:
        pairs = [(n, b) for n, plan in enumerate(plans) if (b := plan.next_ask(known))]
        if not pairs:
            break
        try:
            answers = await _ask([(*proposals[n], b.title) for n, b in pairs], llm)
        except StructuredOutputError as exc:  # degrade: reuse the candidate asked about
            failed = str(exc)
            for n, _ in pairs:
                plans[n].asked += 1
            break
        for (n, b), decision in zip(pairs, answers, strict=True):
            plan = plans[n]
            plan.asked += 1
            plan.answers[id(b)] = decision
            if b.id is not None:
                known[(plan.key, b.id)] = decision
                new_decisions[n].append({"story_id": story_id, "space": space,
                                         "proposal": plan.key, "bookmark_id": b.id,
                                         "decision": decision})
    return [_decide(plan, decisions, failed, known)
            for plan, decisions in zip(plans, new_decisions, strict=True)]


def _decide(plan: _Plan, decisions: list[dict], failed: str,
            known: dict[tuple[str, int], str]) -> MatchOutcome:
    if plan.outcome is not None:
        return plan.outcome
    for b in plan.asks:
        decision = plan.decision(b, known)
        if decision is None:  # still undecided: the call failed
            return MatchOutcome(b, plan.asked, decisions, fallback=failed)
        if decision == "reuse":
            return MatchOutcome(b, plan.asked, decisions)
    return MatchOutcome(None, plan.asked, decisions)


async def _ask(pairs: list[tuple[str, str, str, str]], llm: LLM) -> list[str]:
    """The decisions for (wanted, type, subject, existing) pairs, in one call."""
    if len(pairs) == 1:
        wanted, kind, subject, existing = pairs[0]
        answer = await llm.structured(
            prompts.match(wanted=wanted, kind=kind, subject=subject, existing=existing),
            Decision, purpose="match", max_tokens=20)
        return [answer.decision]
    reply = await llm.structured(prompts.match_many(pairs=pairs), decisions_schema(len(pairs)),
                                 purpose="match", max_tokens=12 * len(pairs) + 16)
    return [getattr(reply, f"d{n}") for n in range(1, len(pairs) + 1)]


@functools.lru_cache(maxsize=32)
def decisions_schema(n: int) -> type[BaseModel]:
    """A reply with a decision per pair: d1, d2, … each "reuse" or "new"."""
    return create_model(f"Decisions{n}", **{f"d{k}": (Literal["reuse", "new"], ...)
                                             for k in range(1, n + 1)})
