"""What one bookmark needs from a block of actions, and how a reply updates it.

The type's rules of sync.py, one block at a time (see joint_sync.py): a concept reads a
block that mentions its subject, a behavioral bookmark one where its subject acts, a state
every block. `apply` is the same update as sync.py's for one reply; `validate` checks one
part of a joint reply as its own call would be checked. Over several blocks read in one
call (`span_spec`), a state has a part per block (`block_spec`), the others one for all.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, ValidationError

from bookmarks.engine import joint_prompts as jp
from bookmarks.engine.actor import echoes_prompt
from bookmarks.engine.lineage import IndexedLine
from bookmarks.engine.sync import (
    BEHAVIORAL_TOKENS,
    CONCEPT_TOKENS,
    STATE_TOKENS,
    FirstState,
    StateDecision,
    _before,
    _keep_pinned,
    _non_blank,
    _says_something,
)
from bookmarks.memory import BehavioralExample, StateNode


def kind_of(m) -> str:
    if m.bm.type == "state" and not m.content.nodes:
        return "first_state"
    return m.bm.type


def section_text(m) -> str:
    if m.bm.type == "state":
        return m.content.nodes[-1].text if m.content.nodes else ""
    if m.bm.type == "concept":
        return m.content.description
    return ""


def spec_for(m, chunk: list[IndexedLine]) -> dict | None:
    """What this bookmark needs from the chunk, or None (nothing to ask the model)."""
    kind = kind_of(m)
    if kind == "concept":
        if any(lo <= chunk[0].index <= hi for lo, hi in m.skip):
            return None
        hits = [ln.index for ln in chunk
                if m.pattern and m.pattern.search(f"{ln.character} {ln.text}")]
        return {"kind": kind, "hits": hits} if hits else None
    if kind == "behavioral":
        found = [ln.index for ln in chunk if ln.character.casefold() in m.keys]
        return {"kind": kind, "candidates": found[:64]} if found else None
    return {"kind": kind}


def span_spec(m, blocks: list[list[IndexedLine]]) -> dict | None:
    """What this bookmark needs from several blocks read in one call: a state, an answer per
    block (a first state first when nothing is recorded yet); a concept, one description
    from the mentions in blocks it does not leave out; a behavioral bookmark, its
    subject's actions in all of them as candidates (None: nothing to ask)."""
    kind = kind_of(m)
    if kind in ("state", "first_state"):
        return {"kind": kind, "blocks": len(blocks)}
    specs = [spec for block in blocks if (spec := spec_for(m, block)) is not None]
    if not specs:
        return None
    if kind == "concept":
        return {"kind": kind, "hits": [h for spec in specs for h in spec["hits"]]}
    return {"kind": kind, "candidates": [c for spec in specs for c in spec["candidates"]]}


def per_block(spec: dict) -> bool:
    """Does this part answer once per block (a state) rather than once for all?"""
    return spec["kind"] in ("state", "first_state")


def block_spec(spec: dict, j: int) -> dict:
    """A state part's spec for block j of a multi-block read (0: the first)."""
    return {"kind": "first_state" if j == 0 and spec["kind"] == "first_state" else "state"}


def reply_tokens(spec: dict, blocks: int) -> int:
    """The reply room a part needs over `blocks` blocks: a state's decision per block, a
    behavioral keep list that can grow with them, one description."""
    if per_block(spec):
        return STATE_TOKENS * blocks
    return CONCEPT_TOKENS if spec["kind"] == "concept" else BEHAVIORAL_TOKENS * blocks


def part_text(m, spec: dict) -> str:
    bm = m.bm
    if spec["kind"] == "state":
        node = m.content.nodes[-1]
        return jp.state_part(title=bm.title, subject=bm.subject, node=node.text,
                             node_range=f"actions {node.start}–{node.end}")
    if spec["kind"] == "first_state":
        return jp.first_state_part(title=bm.title, subject=bm.subject)
    if spec["kind"] == "concept":
        return jp.concept_part(title=bm.title, subject=bm.subject,
                               current=m.content.description, pinned=bm.pinned)
    return jp.behavioral_part(title=bm.title, subject=bm.subject, candidates=spec["candidates"])


def keep_check(size: int) -> Callable[[jp.KeepNumbers], None]:
    def check(value: jp.KeepNumbers) -> None:
        bad = [x for x in value.keep if not 1 <= x <= size]
        if bad:
            raise ValueError(f"numbers must be between 1 and {size}, not {bad}")
    return check


def validate(spec: dict, raw: object) -> BaseModel | None:
    """One part of a joint reply, validated as its own call would be (None: invalid)."""
    if not isinstance(raw, dict):
        return None
    model = {"state": StateDecision, "first_state": FirstState, "concept": jp.ConceptUpdate,
             "behavioral": jp.KeepNumbers}[spec["kind"]]
    try:
        value = model.model_validate(raw)
        if spec["kind"] == "first_state":
            _non_blank(value)
        elif spec["kind"] == "behavioral":
            keep_check(len(spec["candidates"]))(value)
        elif spec["kind"] == "concept" and echoes_prompt(value.description):
            return None
    except (ValidationError, ValueError):
        return None
    return value


def apply(m, spec: dict, value: BaseModel, chunk: list[IndexedLine]) -> None:
    """The type's update rule with one reply (the same as sync.py's)."""
    first, last = chunk[0].index, chunk[-1].index
    bm, content = m.bm, m.content
    if spec["kind"] == "concept":
        text = value.description.strip()
        if text:
            content.description = _keep_pinned(bm, content.description, text)
        content.evidence = (content.evidence + spec["hits"])[-32:]
        return
    if spec["kind"] == "behavioral":
        have = {e.index for e in content.examples}
        for x in sorted(set(value.keep)):
            index = spec["candidates"][x - 1]
            pos = m.position[index]
            if index not in have:
                content.examples.append(BehavioralExample(
                    index=index, action=m.context[pos].text, scene=_before(m.context, pos)))
        return
    node = content.nodes[-1] if content.nodes else None
    if spec["kind"] == "first_state":
        kind, text = "append", value.text.strip()
    else:
        kind, text = value.decision, value.text.strip()
    if kind != "unchanged" and not _says_something(text):
        kind = "unchanged"
    if kind == "refine" and bm.pinned:
        kind = "append"  # the user's pinned node stays as written
    if kind == "unchanged" and node is not None:
        content.nodes[-1] = node.model_copy(update={"end": last})
    elif kind == "refine" and node is not None:
        content.nodes[-1] = StateNode(text=text, start=node.start, end=last)
        m.events.append({"kind": "state_refined", "before": node.text, "after": text,
                         "range": [node.start, last]})
    elif kind != "unchanged":
        content.nodes.append(StateNode(text=text, start=first, end=last))
        m.events.append({"kind": "state_appended", "before": node.text if node else "",
                         "after": text, "range": [first, last]})
