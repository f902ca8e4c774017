"""Story data: the storyline of actions, its cast, and multiple-choice questions.

These pydantic models are the boundary between importers, the store and the engine.
Action indices are 1-based and contiguous: action i is the i-th line of the storyline.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

NARRATION = "narration"
PSEUDO_CHARACTERS = frozenset({NARRATION, "environment"})


class Character(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=120)
    aliases: list[str] = Field(default_factory=list)
    major: bool = False

    def keys(self) -> list[str]:
        """Every name this character is mentioned by (canonical first, no duplicates)."""
        seen: dict[str, str] = {}
        for key in [self.name, *self.aliases]:
            seen.setdefault(key.casefold(), key)
        return list(seen.values())


class Action(BaseModel):
    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=1)
    character: str = Field(min_length=1)
    text: str = Field(min_length=1)
    chapter: str | None = None
    # who could perceive it, where the source says (e.g. a JSONL "present" field);
    # otherwise derived from the storyline (see presence.py)
    present: list[str] | None = None
    # why a writer should check who speaks it: the import's rules attributed it without a
    # tag naming the speaker (see attribution_check.py); None when sure, or corrected
    check: str | None = Field(default=None, max_length=200)
    # the line of the file it was read from where it starts (None: not known), so a writer
    # checking its speaker can see the original wording (`Story.source`); never exported
    line: int | None = Field(default=None, ge=1)


class Question(BaseModel):
    """A multiple-choice question asked after action `after` (answerable from 1..after)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    after: int = Field(default=0, ge=0)  # 0: no story point given — asked at the end
    character: str | None = None
    question: str = Field(min_length=1)
    options: dict[str, str]
    answer: str
    evidence: list[int] = Field(default_factory=list)
    # about something the character did not witness: `answer` is right for what they
    # know (e.g. "she does not know"), `omniscient_answer` for someone who saw it all
    witnessed: bool = False
    omniscient_answer: str | None = None

    @field_validator("options")
    @classmethod
    def _letters(cls, options: dict[str, str]) -> dict[str, str]:
        if len(options) < 2 or not all(re.fullmatch(r"[A-Z]", k) for k in options):
            raise ValueError("options must map two or more capital letters to texts")
        return options


class Story(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str = Field(min_length=1, max_length=200)
    description: str = ""
    author: str = ""
    source_format: str = "jsonl"
    characters: list[Character]
    actions: list[Action]
    questions: list[Question] = Field(default_factory=list)
    # the decoded text of the file it was read from (None: not from a file): the store keeps
    # it to show a line where it stands in the file (`Action.line`)
    source: str | None = None

    def character(self, name: str) -> Character | None:
        folded = name.casefold()
        for c in self.characters:
            if c.name.casefold() == folded or any(a.casefold() == folded for a in c.aliases):
                return c
        return None

    def action_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for a in self.actions:
            counts[a.character] = counts.get(a.character, 0) + 1
        return counts

    def chapters(self) -> list[str]:
        seen: dict[str, None] = {}
        for a in self.actions:
            if a.chapter:
                seen.setdefault(a.chapter, None)
        return list(seen)
