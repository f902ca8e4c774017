"""Plain prose → actions: paragraphs become narration; quoted dialogue becomes the
speaker's action when the paragraph makes the speaker clear ("…," said Mara / Mara
asked, "…"). Chapter headings ("Chapter 3", "# Part Two") become chapter labels."""

from __future__ import annotations

import re

from .errors import StoryFormatError
from .story import NARRATION, Action

_QUOTE = re.compile(r"[\"“]([^\"“”]+)[\"”]")
_VERBS = (
    r"said|asked|replied|answered|whispered|shouted|called|cried|muttered|murmured|"
    r"added|snapped|sighed|laughed|insisted|told|continued|began|exclaimed|demanded"
)
_NAME = r"([A-Z][a-z]+(?:\s[A-Z][a-z]+)?)"
_AFTER = re.compile(rf"^[\s,]*(?:{_VERBS})\s+{_NAME}\b|^[\s,]*{_NAME}\s+(?:{_VERBS})\b")
_BEFORE = re.compile(rf"\b{_NAME}\s+(?:{_VERBS})[\s,:]*$|\b(?:{_VERBS})\s+{_NAME}[\s,:]*$")
_CHAPTER = re.compile(r"^\s*(?:#{1,6}\s+(.+)|((?:chapter|part|book|act|scene)\s+[\w\-]+.*))\s*$",
                      re.IGNORECASE)
_NOT_NAMES = {"He", "She", "They", "It", "I", "We", "You", "The", "Then", "And", "But"}


def _speaker(paragraph: str, quotes: list[re.Match]) -> str | None:
    first, last = quotes[0], quotes[-1]
    candidates = []
    after = _AFTER.match(paragraph[first.end():])
    if after:
        candidates.append(after.group(1) or after.group(2))
    before = _BEFORE.search(paragraph[: first.start()])
    if before:
        candidates.append(before.group(1) or before.group(2))
    tail = _AFTER.match(paragraph[last.end():])
    if tail:
        candidates.append(tail.group(1) or tail.group(2))
    names = [c for c in candidates if c and c.split()[0] not in _NOT_NAMES]
    return names[0] if names else None


def parse_prose(lines: list[str], file: str) -> list[Action]:
    actions: list[Action] = []
    chapter: str | None = None
    paragraph: list[str] = []
    start = 1

    def flush() -> None:
        nonlocal paragraph
        if not paragraph:
            return
        text = " ".join(s.strip() for s in paragraph)
        paragraph = []
        if len(text) > 20_000:
            raise StoryFormatError("a paragraph is longer than 20,000 characters.",
                                   file=file, line=start)
        quotes = list(_QUOTE.finditer(text))
        speaker = _speaker(text, quotes) if quotes else None
        if speaker is None:
            actions.append(Action(index=len(actions) + 1, character=NARRATION, text=text,
                                  chapter=chapter))
            return
        spoken = " ".join(q.group(1).strip().rstrip(",") for q in quotes)
        rest = _QUOTE.sub(" ", text)
        rest = re.sub(rf"\b{re.escape(speaker)}\s+(?:{_VERBS})\b|\b(?:{_VERBS})\s+{re.escape(speaker)}\b",
                      " ", rest)
        rest = re.sub(r"\s+", " ", rest).strip(" ,.;:")
        if len(rest.split()) >= 8:
            actions.append(Action(index=len(actions) + 1, character=NARRATION, text=rest + ".",
                                  chapter=chapter))
        actions.append(Action(index=len(actions) + 1, character=speaker, text=spoken,
                              chapter=chapter))

    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            flush()
            continue
        heading = _CHAPTER.match(line)
        if heading and not paragraph and len(line) < 80:
            chapter = (heading.group(1) or heading.group(2)).strip()
            continue
        if not paragraph:
            start = number
        paragraph.append(line)
    flush()
    return actions
