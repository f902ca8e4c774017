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
(proposal, candidate) so the same pair is never asked twice.

A decision still invalid after its re-ask never fails the prediction: the candidate asked
about is reused. It is of the same type, about the same subject and shares at least
`MIN_OVERLAP` of the title's content words, so its memory concerns the section; reusing it
brings it forward from its checkpoint instead of synchronizing a near-duplicate from the
start. Such a fallback is reported (`MatchOutcome.fallback`) and not remembered as a
decision: the pair is asked again next time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

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


async def match(title: str, kind: str, subject: str, candidates: list[Bookmark], *,
                llm: LLM, known: dict[tuple[str, int], str], story_id: int,
                space: str) -> MatchOutcome:
    same = [b for b in candidates if b.type == kind and same_subject(b.subject, subject)]
    key = proposal_key(kind, subject, title)
    for b in same:  # the same title, compared as the bookmark's identity compares it
        if identity_key(b.title) == identity_key(title) and (
                tokens(b.subject) == tokens(subject)
                or identity_key(b.subject) == identity_key(subject)):
            return MatchOutcome(b, 0, [])
    ranked = bm25_rank(title, [b.title for b in same])
    plausible = [same[n] for n, _ in ranked if overlap(title, same[n].title) >= MIN_OVERLAP]
    asked = 0
    new_decisions: list[dict] = []
    for b in plausible[:MAX_ASKS]:
        decision = known.get((key, b.id)) if b.id is not None else None
        if decision is None:
            asked += 1
            try:
                answer = await llm.structured(
                    prompts.match(wanted=title, kind=kind, subject=subject, existing=b.title),
                    Decision, purpose="match", max_tokens=20)
            except StructuredOutputError as exc:  # degrade: reuse this candidate
                return MatchOutcome(b, asked, new_decisions, fallback=str(exc))
            decision = answer.decision
            if b.id is not None:
                known[(key, b.id)] = decision
                new_decisions.append({"story_id": story_id, "space": space, "proposal": key,
                                      "bookmark_id": b.id, "decision": decision})
        if decision == "reuse":
            return MatchOutcome(b, asked, new_decisions)
    return MatchOutcome(None, asked, new_decisions)
