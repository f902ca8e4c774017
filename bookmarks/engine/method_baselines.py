"""The paper's baselines behind the same `Grounder` protocol.

- Vanilla: no grounding.
- RICL: the character's top-k past scene→action pairs most similar to the scene (BM25).
- ETA: one profile of the character, updated incrementally (summarise the new
  observations since the last update, aggregate into the previous profile); checkpointed
  and versioned like bookmarks, so it is never recomputed from scratch.
- 3-way ETA: the profile split into experience / state / behavior sections; per
  prediction the model selects the sections it needs and synchronizes only those.

Invalid model output never fails a prediction: a selection still invalid after its re-ask
uses every section, and a summary or profile that is not one (JSON, the prompt's own
words) keeps the profile as of the last good chunk; both are `fallback` events.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from bookmarks.engine import prompts
from bookmarks.engine.actor import echoes_prompt
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
from bookmarks.engine.recall import new_bookmark, visible_bookmarks
from bookmarks.engine.tasks import gather_all
from bookmarks.engine.textsearch import bm25_rank, mention_pattern
from bookmarks.errors import StructuredOutputError
from bookmarks.memory import PROFILE, Bookmark, ProfileContent
from bookmarks.models.llm import LLM
from bookmarks.store import Store


class VanillaGrounder:
    name = "vanilla"

    def __init__(self, *_: object, **__: object):
        pass

    async def ground(self, req: GroundRequest) -> Grounding:
        return Grounding(method=self.name, text="", events=[grounded_event("", [])])


class RICLGrounder:
    name = "ricl"

    def __init__(self, store: Store, memory: LLM | None = None, top: int = 8,
                 token_budget: int = DEFAULT_TOKEN_BUDGET):
        self.store, self.top, self.token_budget = store, top, token_budget
        self.embedder = memory.embedder if memory is not None else None

    async def ground(self, req: GroundRequest) -> Grounding:
        names = {k.casefold() for c in self.store.characters(req.story_id) if c.name == req.character
                 for k in c.keys()} or {req.character.casefold()}
        prefix = req.visible(req.lineage.lines(self.store, 1, req.position - 1))
        pairs = [(n, ln) for n, ln in enumerate(prefix) if ln.character.casefold() in names
                 and n < len(prefix) - len(req.scene)]  # not the current scene itself
        docs = [" ".join(x.text for x in prefix[max(0, n - 3):n]) for n, _ in pairs]
        query = " ".join(ln.text for ln in req.scene[-4:])
        if self.embedder is not None and docs:  # the paper's retrieval: scene embeddings
            by = "embeddings"
            ranked = await self._by_embedding(query, docs)
        else:
            by = "bm25"
            ranked = bm25_rank(query, docs, top=self.top)
        lines, evidence = [], []
        for pos, _ in sorted(ranked, key=lambda r: pairs[r[0]][1].index):
            n, ln = pairs[pos]
            before = prefix[n - 1] if n else None
            ctx = f'after "{before.character}: {before.text[:120]}"' if before else "at the start"
            lines.append(f"- [{ln.index}] {ctx} → {req.character}: {ln.text}")
            evidence.append(ln.index)
        piece = Piece(label=f"Similar past moments of {req.character}", text="\n".join(lines),
                      evidence=evidence)
        text, kept = compose([piece], self.token_budget)
        return Grounding(method=self.name, text=text, pieces=kept,
                         events=[{"kind": "retrieved", "count": len(lines), "by": by},
                                 grounded_event(text, kept)])

    async def _by_embedding(self, query: str, docs: list[str]) -> list[tuple[int, float]]:
        """(doc position, cosine similarity) of the top docs; each text is embedded once per
        process and embedding model (past scenes do not change)."""
        model = self.embedder.model.name
        if len(_VECTORS) > 200_000:
            _VECTORS.clear()
        missing = list(dict.fromkeys(t for t in [query, *docs] if (model, t) not in _VECTORS))
        if missing:
            vectors = await self.embedder.embed(missing, purpose="ricl:embed")
            _VECTORS.update({(model, t): v for t, v in zip(missing, vectors, strict=True)})
        q = _VECTORS[(model, query)]
        scores = [(n, _cosine(q, _VECTORS[(model, d)])) for n, d in enumerate(docs)]
        scores.sort(key=lambda x: (-x[1], -x[0]))
        return scores[: self.top]


_VECTORS: dict[tuple[str, str], list[float]] = {}  # (embedding model, text) → vector


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


class Select(BaseModel):
    # an empty choice is allowed: then every section is used
    sections: list[Literal["experience", "state", "behavior"]] = Field(max_length=3)


@dataclass
class ProfileSpec:
    title: str
    focus: str
    tokens: int


class ETAGrounder:
    """Extract-and-aggregate profile(s), synchronized chunk by chunk from a checkpoint."""

    name = "eta"
    chunk = 64

    def __init__(self, store: Store, memory: LLM, capacity: int = 1024,
                 token_budget: int = DEFAULT_TOKEN_BUDGET):
        self.store, self.memory, self.token_budget = store, memory, token_budget
        self.specs = self.profile_specs(capacity)

    def profile_specs(self, capacity: int) -> list[ProfileSpec]:
        return [ProfileSpec("Profile", "experiences, current state and behavior", capacity)]

    async def select(self, req: GroundRequest, llm: LLM) -> tuple[list[ProfileSpec], str]:
        """The sections to use, and why the choice fell back to all of them ("" if not)."""
        return self.specs, ""

    async def ground(self, req: GroundRequest) -> Grounding:
        meter = self.memory.metered()
        chosen, failed = await self.select(req, meter)
        p_new = req.position - 1
        existing = {b.title: b for b in visible_bookmarks(
            self.store, req.story_id, req.space, req.lineage, p_new, types=(PROFILE,))
            if b.subject == req.character}
        writes, events = MemoryWrites(), [{"kind": "selected", "sections": [s.title for s in chosen]}]
        if failed:
            events.append({"kind": "fallback", "step": "select", "outcome": "every section",
                           "reason": failed[:300]})
        bms = []
        for spec in chosen:
            title = f"{self.name.upper()} {spec.title.lower()} of {req.character}"
            bm = existing.get(title)
            if bm is None:
                bm = new_bookmark(req.story_id, req.space, req.character, PROFILE, title,
                                  self.store)
                if bm.id is None:
                    writes.new_bookmarks.append(bm)
                events.append({"kind": "initialized", "bookmark": bm, "title": title,
                               "type": PROFILE, "subject": req.character, "p": 0})
            else:
                events.append({"kind": "reused", "bookmark": bm, "title": title, "type": PROFILE,
                               "subject": req.character, "from_p": bm.p, "asked": 0})
            bms.append(bm)
        await gather_all(*(self._sync(req, bm, spec, writes, events, meter)
                           for bm, spec in zip(bms, chosen, strict=True)))
        pieces = [Piece(label=bm.title, text=bm.content.text, evidence=bm.content.evidence[-8:],
                        bookmark=bm) for bm in bms]
        text, kept = compose(pieces, self.token_budget)
        events.append(grounded_event(text, kept))
        return Grounding(method=self.name, text=text, pieces=kept, events=events, writes=writes,
                         usage=dict(meter.usage))

    async def _sync(self, req: GroundRequest, bm: Bookmark, spec: ProfileSpec,
                    writes: MemoryWrites, events: list[dict], meter: LLM) -> None:
        p_new = req.position - 1
        if p_new <= bm.p and bm.id is not None:
            return
        llm = self.memory.metered()
        content: ProfileContent = bm.content.model_copy(deep=True)  # type: ignore[assignment]
        suffix = req.visible(req.lineage.lines(self.store, bm.p + 1, p_new))
        keys = [k for c in self.store.characters(req.story_id) if c.name == req.character
                for k in c.keys()] or [req.character]
        pattern = mention_pattern(keys)
        words = max(40, int(spec.tokens * 0.7))
        chars = llm.prompt_chars(160)
        start, done_to, stalled = 0, bm.p, ""
        while start < len(suffix):
            block = prompts.pack(suffix[start:start + self.chunk], chars, newest=False)
            # every chunk is read, also those that do not name the character: events off
            # stage change their situation too (and the paper's ETA reads them all)
            seen = [ln.index for ln in block if pattern and pattern.search(f"{ln.character} {ln.text}")]
            summary = await llm.text(prompts.eta_extract(story=req.story_title, character=req.character,
                                                         focus=spec.focus, block=block, words=80),
                                     purpose="eta:extract", max_tokens=160)
            profile = None if echoes_prompt(summary.text) else await llm.text(
                prompts.eta_aggregate(story=req.story_title, character=req.character,
                                      focus=spec.focus, profile=content.text,
                                      summary=summary.text.strip(), words=words),
                purpose="eta:aggregate", max_tokens=spec.tokens)
            if profile is None or echoes_prompt(profile.text):
                bad = summary.text if profile is None else profile.text
                stalled = (f"the {'summary' if profile is None else 'profile'} was not one "
                           f"(JSON, or the prompt's own words): {bad.strip()[:120]!r}")
                break
            if profile.text.strip():
                content.text = profile.text.strip()
            content.evidence = (content.evidence + seen)[-32:]
            start += len(block)
            done_to = block[-1].index
        if not stalled:
            done_to = p_new
        if done_to > bm.p or bm.id is None:
            writes.versions.append(VersionWrite(bm, req.lineage.branch_id, done_to, content))
        if stalled:
            events.append({"kind": "fallback", "step": "sync", "bookmark": bm, "title": bm.title,
                           "outcome": f"kept the profile as of action {done_to} "
                                      f"({p_new - done_to} actions behind)", "reason": stalled})
        read = sum(1 for ln in suffix if ln.index <= done_to)
        u = llm.usage
        for key in ("calls", "prompt_tokens", "completion_tokens"):
            meter.usage[key] += u[key]
        fresh = bm.p == 0
        per_p = u["prompt_tokens"] / u["calls"] if u["calls"] else 0
        per_c = u["completion_tokens"] / u["calls"] if u["calls"] else 0
        calls_wo = u["calls"] if fresh else max(u["calls"], 2 * math.ceil(p_new / self.chunk))
        cost = {"story_id": req.story_id, "space": req.space, "branch_id": req.lineage.branch_id,
                "bookmark": bm, "method": self.name, "type": PROFILE, "position": req.position,
                "story_length": req.lineage.length(self.store), "p_old": bm.p, "p_new": done_to,
                "actions_read": read, "calls": u["calls"],
                "prompt_tokens": u["prompt_tokens"], "completion_tokens": u["completion_tokens"],
                "actions_read_wo": p_new, "calls_wo": calls_wo,
                "prompt_tokens_wo": u["prompt_tokens"] if fresh else calls_wo * per_p,
                "completion_tokens_wo": u["completion_tokens"] if fresh else calls_wo * per_c}
        writes.costs.append(cost)
        events.append({"kind": "synchronized", "bookmark": bm, "title": bm.title, "type": PROFILE,
                       "p_old": bm.p, "p_new": done_to, "actions_read": read,
                       "calls": u["calls"], "prompt_tokens": u["prompt_tokens"],
                       "completion_tokens": u["completion_tokens"], "actions_read_wo": p_new,
                       "calls_wo": calls_wo,
                       "tokens_wo": cost["prompt_tokens_wo"] + cost["completion_tokens_wo"]})
        bm.content, bm.p = content, done_to


class ETA3Grounder(ETAGrounder):
    name = "eta3"

    def __init__(self, store: Store, memory: LLM, capacity: int = 256,
                 token_budget: int = DEFAULT_TOKEN_BUDGET):
        super().__init__(store, memory, capacity, token_budget)

    def profile_specs(self, capacity: int) -> list[ProfileSpec]:
        return [ProfileSpec("Experience", "experiences (what has happened to them)", capacity),
                ProfileSpec("State", "current situation, knowledge, relationships and goals", capacity),
                ProfileSpec("Behavior", "behavior and way of speaking", capacity)]

    async def select(self, req: GroundRequest, llm: LLM) -> tuple[list[ProfileSpec], str]:
        try:
            chosen = await llm.structured(prompts.eta3_select(character=req.character,
                                                              scene=req.scene),
                                          Select, purpose="eta3:select", max_tokens=40)
        except StructuredOutputError as exc:  # still invalid after the re-ask: all sections
            return self.specs, str(exc)
        wanted = {s.capitalize() for s in chosen.sections}
        return [s for s in self.specs if s.title in wanted] or self.specs, ""
