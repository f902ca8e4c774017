"""Prompts and reply schemas for reading a block of actions once for several bookmarks.

Every prompt here puts the block first — `Story: "…". New actions:` and the numbered
lines, exactly as the state prompts of prompts.py do — so that calls about the same block
share their longest prefix (a server that keeps the last prompt's cache, llama.cpp, or
that caches prefixes, vLLM, does not process it again). What follows the block is one
section (`block_concept`, `block_behavioral`, or prompts.state/first_state) or several
(`joint_update`: one reply with a part per section, each part validated on its own).

`joint_blocks` reads several consecutive blocks in one call (a long gap that fits the
model's context): the blocks are numbered, a state answers once per block in block order
(keys `s1_b1`, `s1_b2`, …: the paper's state granularity, one decision per block), a
description or examples once for all of them (`s2`), each answer validated on its own.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bookmarks.engine.actor import PLACEHOLDER, PLACEHOLDER_NUMBER, register_app_texts
from bookmarks.engine.lineage import IndexedLine
from bookmarks.engine.prompts import MEMORY_SYSTEM, lines_block
from bookmarks.engine.sync import FirstState, StateDecision
from bookmarks.stories.story import NARRATION

CONCEPT_WORDS = 120
STATE_WORDS = 60


def _head(story: str, block: Sequence[IndexedLine]) -> str:
    """The shared prefix of every prompt about this block (the same as prompts.state)."""
    return f'Story: "{story}". New actions:\n{lines_block(block)}\n\n'


def block_concept(*, story: str, block: Sequence[IndexedLine], title: str, subject: str,
                  current: str, p: int, pinned: bool) -> list[dict[str, str]]:
    keep = ("The current description was written by the user: keep its wording and only add "
            "new facts. " if pinned else "")
    user = (
        _head(story, block)
        + f'Section: "{title}" - a description of {subject}.\n'
        f"Current description (as of action {p}): {current or '(none yet)'}\n\n"
        f"{keep}Write the updated description of {subject} in at most {CONCEPT_WORDS} words. "
        "Keep what is still true, add what these actions reveal. Reply with the description "
        "only."
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def block_behavioral(*, story: str, block: Sequence[IndexedLine], title: str, subject: str,
                     candidates: Sequence[int]) -> list[dict[str, str]]:
    user = (
        _head(story, block)
        + f'Section: "{title}" - examples of how {subject} behaves.\n'
        f"{subject}'s actions above, as candidates: {numbered(candidates)}.\n\n"
        "Which candidates are good examples for this section? Reply with their numbers in "
        '"keep" (an empty list if none fits).'
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def numbered(indices: Sequence[int]) -> str:
    """Candidates numbered from 1 by their story index: "1 = [12], 2 = [15]"."""
    return ", ".join(f"{n} = [{i}]" for n, i in enumerate(indices, start=1))


LEGEND = {
    "state": '- a state: "decision": "unchanged" (nothing relevant happened), "refine" (the '
             'same state, more detail) or "append" (the state changed), and "text": the full '
             f"new state in at most {STATE_WORDS} words (empty if unchanged);\n",
    "first_state": '- a state with nothing recorded yet: "text": the state as these actions '
                   f"leave it, in at most {STATE_WORDS} words;\n",
    "concept": '- a description: "description": the updated description in at most '
               f'{CONCEPT_WORDS} words, keeping what is still true ("" if nothing new);\n',
    "behavioral": '- examples: "keep": the numbers of the candidates that are good examples '
                  "of the section ([] if none).\n",
}


def state_part(*, title: str, subject: str, node: str, node_range: str) -> str:
    return f'state of {subject}, "{title}" - now ({node_range}): {node}'


def first_state_part(*, title: str, subject: str) -> str:
    return f'state of {subject}, "{title}" - nothing recorded yet'


def concept_part(*, title: str, subject: str, current: str, pinned: bool) -> str:
    keep = " (the user's words: keep them, only add facts)" if pinned else ""
    return f'description of {subject}, "{title}" - now{keep}: {current or "(none yet)"}'


def behavioral_part(*, title: str, subject: str, candidates: Sequence[int]) -> str:
    return (f'examples of how {subject} behaves, "{title}" - {subject}\'s actions above as '
            f"candidates: {numbered(candidates)}")


def joint_update(*, story: str, block: Sequence[IndexedLine], parts: Sequence[str],
                 kinds: Sequence[str] = tuple(LEGEND)) -> list[dict[str, str]]:
    keys = ", ".join(f"s{n}" for n in range(1, len(parts) + 1))
    listed = "\n".join(f"s{n}. {text}" for n, text in enumerate(parts, start=1))
    legend = "".join(text for kind, text in LEGEND.items() if kind in kinds)
    user = (
        _head(story, block)
        + "Update each memory section below from these new actions, each on its own. The "
        f"answer for\n{legend}{listed}\n\nReply with one JSON object with one key per section "
        f"({keys}), each holding that section's answer."
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


def block_key(part: int, block: int | None = None) -> str:
    """The reply key of section `part`'s answer (for block `block` of a multi-block read)."""
    return f"s{part}" if block is None else f"s{part}_b{block}"


def blocks_head(story: str, blocks: Sequence[Sequence[IndexedLine]]) -> str:
    """The shared prefix of a multi-block prompt: the blocks, numbered, in story order."""
    text = "\n".join(f"Block {n} of {len(blocks)} (actions {b[0].index}–{b[-1].index}):\n"
                     f"{lines_block(b)}"
                     for n, b in enumerate(blocks, start=1))
    return f'Story: "{story}". New actions:\n{text}\n\n'


BLOCKS_NOTE = ("A state answers once per block, in block order ({first} for block 1, {second} "
               "for block 2, …), each deciding from the state as the blocks before it left "
               "it; the other sections answer once for all the blocks.")
FIRST_NOTE = (" A state with nothing recorded yet answers block 1 with its first state, and "
              "each later block with a decision.")


def joint_blocks(*, story: str, blocks: Sequence[Sequence[IndexedLine]], parts: Sequence[str],
                 per_block: Sequence[bool], kinds: Sequence[str] = tuple(LEGEND)
                 ) -> list[dict[str, str]]:
    """One call for several blocks: `per_block[n]` says whether section n + 1 (a state)
    answers once per block."""
    keys = [block_key(n, b) for n, each in enumerate(per_block, start=1)
            for b in (range(1, len(blocks) + 1) if each else (None,))]
    listed = "\n".join(f"s{n}. {text}" for n, text in enumerate(parts, start=1))
    legend = "".join(text for kind, text in LEGEND.items() if kind in kinds)
    state = next((n for n, each in enumerate(per_block, start=1) if each), 1)
    note = BLOCKS_NOTE.format(first=block_key(state, 1), second=block_key(state, 2)) + (
        FIRST_NOTE if "first_state" in kinds else "")
    user = (
        blocks_head(story, blocks)
        + f"Update each memory section below from these new actions, each on its own. {note} "
        f"The answer for\n{legend}{listed}\n\nReply with one JSON object with one key per "
        f"answer ({', '.join(keys)}), each holding that answer."
    )
    return [{"role": "system", "content": MEMORY_SYSTEM}, {"role": "user", "content": user}]


# -- reply schemas ---------------------------------------------------------------------------

class ConceptUpdate(BaseModel):
    description: str = Field(default="", max_length=2000)


class KeepNumbers(BaseModel):
    keep: list[int] = Field(default_factory=list, max_length=256)


class JointReply(BaseModel):
    """Any JSON object: each part (`s1`, `s2`, …) is validated on its own, so one invalid
    part is asked again alone instead of failing them all. The JSON schema sent to the
    server (see `joint_schema`) still describes every part exactly."""

    model_config = ConfigDict(extra="allow")

    def part(self, n: int, block: int | None = None) -> Any:
        return (self.model_extra or {}).get(block_key(n, block))


_SCHEMAS: dict[type, dict] = {}


class _JointSchemaBase(JointReply):
    @classmethod
    def model_json_schema(cls, *args: Any, **kw: Any) -> dict[str, Any]:  # noqa: D102
        return _SCHEMAS[cls]


def part_schema(kind: str, candidates: int = 0) -> dict:
    """The JSON schema of one part: a state decision, a first state, a description, or
    the numbers kept among `candidates` (an enum, so a grammar allows only those)."""
    if kind == "state":
        return StateDecision.model_json_schema()
    if kind == "first_state":
        return FirstState.model_json_schema()
    if kind == "concept":
        return ConceptUpdate.model_json_schema()
    items = {"type": "integer", "enum": list(range(1, candidates + 1))} if candidates \
        else {"type": "integer"}
    return {"type": "object", "properties": {"keep": {"type": "array", "items": items}},
            "required": ["keep"]}


@functools.lru_cache(maxsize=256)
def joint_schema(kinds: tuple[tuple[str, int], ...], blocks: int = 0) -> type[JointReply]:
    """A reply model for these parts ((kind, candidates) each), one class per shape, so
    schema caches keyed by class stay small. With `blocks` (a multi-block read) a state
    part — "state", or "first_state" for one with nothing recorded yet — has an answer per
    block (`s1_b1` …; after a first state's first block, decisions)."""
    props = {}
    for n, (kind, count) in enumerate(kinds, start=1):
        if blocks and kind in ("state", "first_state"):
            for b in range(1, blocks + 1):
                props[block_key(n, b)] = part_schema(kind if b == 1 else "state")
        else:
            props[block_key(n)] = part_schema(kind, count)
    cls = type(f"JointUpdate{len(kinds)}x{blocks}", (_JointSchemaBase,), {"__module__": __name__})
    _SCHEMAS[cls] = {"type": "object", "properties": props, "required": list(props)}
    return cls


def _templates() -> list[str]:
    x, n = PLACEHOLDER, PLACEHOLDER_NUMBER
    block = [IndexedLine(x, x, n), IndexedLine(NARRATION, x, n)]
    parts = [state_part(title=x, subject=x, node=x, node_range=x),
             first_state_part(title=x, subject=x),
             concept_part(title=x, subject=x, current=x, pinned=True),
             behavioral_part(title=x, subject=x, candidates=[n])]
    msgs = (block_concept(story=x, block=block, title=x, subject=x, current=x, p=n, pinned=True)
            + block_behavioral(story=x, block=block, title=x, subject=x, candidates=[n])
            + joint_update(story=x, block=block, parts=parts)
            + joint_blocks(story=x, blocks=[block, block], parts=parts,
                           per_block=[True, True, False, False], kinds=tuple(LEGEND)))
    return [m["content"] for m in msgs] + parts


register_app_texts(_templates)
