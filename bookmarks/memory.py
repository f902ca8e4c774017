"""Bookmarks as data: typed content per type, versions, and the views shown to the actor.

A bookmark is `(title q, content y, type τ, sync point p)` about a subject. Its history is
a list of immutable versions `(bookmark, branch, p, content)`; content is one of the
pydantic models below. Rendering a view is a pure function of the content.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

BookmarkType = Literal["concept", "state", "behavioral"]
BOOKMARK_TYPES: tuple[str, ...] = ("concept", "state", "behavioral")
PROFILE = "profile"  # ETA / 3-way ETA profiles reuse the same version machinery


class ConceptContent(BaseModel):
    description: str = ""
    keys: list[str] = Field(default_factory=list)  # mention keys: name and aliases
    evidence: list[int] = Field(default_factory=list)  # action indices it was built from


class StateNode(BaseModel):
    text: str
    start: int  # first storyline index this node covers
    end: int  # last storyline index this node covers


class StateContent(BaseModel):
    nodes: list[StateNode] = Field(default_factory=list)


class BehavioralExample(BaseModel):
    index: int  # storyline index of the character's action
    action: str = ""  # the action's text (kept: versions are immutable anyway)
    scene: str = ""  # a short view of what happened just before
    why: str = ""


class BehavioralContent(BaseModel):
    examples: list[BehavioralExample] = Field(default_factory=list)


class ProfileContent(BaseModel):
    text: str = ""
    evidence: list[int] = Field(default_factory=list)


CONTENT_MODELS: dict[str, type[BaseModel]] = {
    "concept": ConceptContent, "state": StateContent, "behavioral": BehavioralContent,
    PROFILE: ProfileContent,
}


def empty_content(kind: str) -> BaseModel:
    return CONTENT_MODELS[kind]()


def parse_content(kind: str, raw: str) -> BaseModel:
    return CONTENT_MODELS[kind].model_validate_json(raw)


@dataclass
class Bookmark:
    """A bookmark as the engine sees it at one story point on one branch."""

    id: int | None  # None until committed
    story_id: int
    space: str
    subject: str
    type: str
    title: str
    pinned: bool = False
    p: int = 0  # sync point of the visible version (0 = never synchronized)
    content: BaseModel | None = None  # None: the type's empty content
    version_id: int | None = None
    activation: str = ""  # "self" | "keys" | "always": grounds without a proposal (cards, lore)

    def __post_init__(self) -> None:
        if self.content is None:
            self.content = empty_content(self.type)

    @property
    def key(self) -> str:
        return f"{self.type}|{self.subject.casefold()}|{self.title.casefold()}"


def render_state(content: StateContent, max_nodes: int = 4) -> tuple[str, list[int]]:
    """The most recent nodes in order, showing how the state evolved."""
    nodes = content.nodes[-max_nodes:]
    lines = []
    evidence: list[int] = []
    for n, node in enumerate(nodes):
        arrow = "→ " if n else ""
        now = " (now)" if n == len(nodes) - 1 else ""
        lines.append(f"{arrow}[actions {node.start}–{node.end}] {node.text}{now}")
        evidence.extend([node.start, node.end])
    return "\n".join(lines), evidence


def render_concept(content: ConceptContent) -> tuple[str, list[int]]:
    return content.description, list(content.evidence[-8:])


def render_profile(content: ProfileContent) -> tuple[str, list[int]]:
    return content.text, list(content.evidence[-8:])


def resolve_refs(value):
    """Replace Bookmark objects inside events by their ids (after they are committed)."""
    if isinstance(value, Bookmark):
        return value.id
    if isinstance(value, dict):
        return {k: resolve_refs(v) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_refs(v) for v in value]
    return value


def render_content(kind: str, content) -> str:
    """A bookmark's whole content as text (every state node, every example)."""
    if kind == "concept":
        return render_concept(content)[0]
    if kind == "state":
        return render_state(content, max_nodes=100)[0]
    if kind == PROFILE:
        return render_profile(content)[0]
    return "\n".join(f"[{e.index}] {e.action}" for e in content.examples)
