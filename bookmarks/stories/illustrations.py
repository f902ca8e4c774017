"""Illustrations, footnotes and side-notes of a printed edition are no part of the story.

Project Gutenberg's illustrated editions set each picture as a bracketed block that can run
over several paragraphs: its caption (often a quotation: `“He came down to see the
place”`), a copyright line (`[_Copyright 1894 by George Allen._]]`), and sometimes the
chapter's decorated heading (`[Illustration: ·PRIDE AND PREJUDICE·` ¶ `Chapter I.]`). Read as
prose they became narration, a caption's quotation became speech, and the chapter was named
`Chapter I.]`. `blank_illustrations` blanks such blocks line by line (so every other line
keeps its number, for the *In the file* view), keeping only a chapter heading found inside,
without its brackets, and the text after a block that closes inside a line (`[Picture: Man
reading book] I remember going …`). A paragraph that opens on a note's number (`[1] Suliman
is the Arabic form of Solomon.--Editor.`) is that note, and goes too, as does a note's mark
in the text (`Jose da Silvestra."[2]`).
"""

from __future__ import annotations

import re

from bookmarks.stories.gutenberg import _FOOTNOTE

_OPEN = re.compile(r"^\s*\[\s*_?(?:illustration|picture|footnote|sidenote|transcriber[’']?s\s+note)\b",
                   re.I)
_NOTE = re.compile(r"^\s*\[\d{1,3}\]\s+\S")
_HEADING = re.compile(r"^\s*(?:chapter|book|part|volume)\s+[\w.-]+.*$", re.I)
LONGEST = 40  # lines: a block still open after this many was no block (a stray bracket)


def blank_illustrations(lines: list[str]) -> list[str]:
    out = list(lines)
    n = 0
    while n < len(lines):
        opens_paragraph = n == 0 or not lines[n - 1].strip()
        if opens_paragraph and _NOTE.match(lines[n]):
            while n < len(lines) and lines[n].strip():
                out[n] = ""
                n += 1
            continue
        if not _OPEN.match(lines[n]):
            out[n] = _FOOTNOTE.sub("", lines[n])
            n += 1
            continue
        end, after = _close(lines, n)
        if end is None:  # never closed: leave the text as it is
            n += 1
            continue
        for k in range(n, end + 1):
            inner = lines[k].strip().lstrip("[").rstrip("]").strip()
            out[k] = inner if k > n and _HEADING.match(inner) and len(inner) < 80 else ""
        out[end] = out[end] or after
        n = end + 1
    return out


def _close(lines: list[str], start: int) -> tuple[int | None, str]:
    """The line where the block opened at `start` closes, and what follows it there."""
    depth = 0
    for k in range(start, min(len(lines), start + LONGEST)):
        for at, char in enumerate(lines[k]):
            depth += (char == "[") - (char == "]")
            if depth == 0 and char == "]":  # `…_]]`: the last of the two closes it
                return k, lines[k][at + 1:].strip()
    return None, ""
