"""The grounding protocol every method implements (Bookmarks and the baselines).

A grounder reads memory and the storyline, may call the memory model, and returns a
`Grounding`: the text given to the actor, its pieces with the storyline evidence, typed
events, and the memory writes to commit — it never writes to the database itself, so a
turn's writes commit together with the turn, or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from pydantic import BaseModel

from bookmarks.engine.lineage import IndexedLine, Lineage
from bookmarks.memory import Bookmark
from bookmarks.stories.presence import Witness

DEFAULT_TOKEN_BUDGET = 1200


@dataclass
class GroundRequest:
    story_id: int
    story_title: str
    lineage: Lineage
    position: int  # i: the index of the action being predicted
    character: str
    scene: list[IndexedLine]
    cast: list[str]
    space: str = "story"
    budget: int = 3
    scene_id: int | None = None
    scene_cast: list[str] = field(default_factory=list)  # who is in the scene being played
    # witnessed knowledge: only lines this filter lets through may reach any prompt
    witness: Witness | None = None

    def visible(self, lines: list[IndexedLine]) -> list[IndexedLine]:
        return self.witness.filter(lines) if self.witness else lines


@dataclass
class Piece:
    label: str
    text: str
    evidence: list[int] = field(default_factory=list)
    bookmark: Bookmark | None = None  # its id is known once committed (resolve_refs)


@dataclass
class VersionWrite:
    bookmark: Bookmark
    branch_id: int
    p: int
    content: BaseModel


@dataclass
class MemoryWrites:
    new_bookmarks: list[Bookmark] = field(default_factory=list)
    versions: list[VersionWrite] = field(default_factory=list)
    costs: list[dict] = field(default_factory=list)
    decisions: list[dict] = field(default_factory=list)


@dataclass
class Grounding:
    method: str
    text: str
    pieces: list[Piece] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    writes: MemoryWrites = field(default_factory=MemoryWrites)
    usage: dict[str, int] = field(default_factory=lambda: {"calls": 0, "prompt_tokens": 0,
                                                           "completion_tokens": 0})


class Grounder(Protocol):
    name: str

    async def ground(self, req: GroundRequest) -> Grounding: ...


def compose(pieces: list[Piece], token_budget: int = DEFAULT_TOKEN_BUDGET) -> tuple[str, list[Piece]]:
    """Join pieces under headings until the budget (≈ 4 characters a token) is used."""
    limit = token_budget * 4
    out: list[str] = []
    kept: list[Piece] = []
    used = 0
    for piece in pieces:
        if not piece.text.strip():
            continue
        block = f"## {piece.label}\n{piece.text.strip()}"
        if used + len(block) > limit:
            room = limit - used
            if room > 200:
                out.append(block[:room].rsplit(" ", 1)[0] + " …")
                kept.append(piece)
            break
        out.append(block)
        kept.append(piece)
        used += len(block) + 2
    return "\n\n".join(out), kept


def grounded_event(g_text: str, pieces: list[Piece]) -> dict:
    return {"kind": "grounded", "text": g_text,
            "pieces": [{"label": p.label, "bookmark_id": p.bookmark,
                        "evidence": sorted(set(p.evidence))} for p in pieces]}
