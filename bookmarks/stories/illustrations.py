"""Illustrations, footnotes and side-notes of a printed edition are no part of the story.

Project Gutenberg's illustrated editions set each picture as a bracketed block that can run
over several paragraphs: its caption (often a quotation: `“He came down to see the
place”`), a copyright line (`[_Copyright 1894 by George Allen._]]`), and sometimes the
chapter's decorated heading (`[Illustration: ·PRIDE AND PREJUDICE·` ¶ `Chapter I.]`). Read as
prose they became narration, a caption's quotation became speech, and the chapter was named
`Chapter I.]`. `blank_illustrations` blanks such blocks line by line (so every other line
keeps its number, for the *In the file* view), keeping only a chapter heading found inside,
without its brackets.
"""

from __future__ import annotations

import re

_OPEN = re.compile(r"^\s*\[\s*_?(?:illustration|footnote|sidenote)\b", re.I)
_HEADING = re.compile(r"^\s*(?:chapter|book|part|volume)\s+[\w.-]+.*$", re.I)
LONGEST = 40  # lines: a block still open after this many was no block (a stray bracket)


def blank_illustrations(lines: list[str]) -> list[str]:
    out = list(lines)
    n = 0
    while n < len(lines):
        if not _OPEN.match(lines[n]):
            n += 1
            continue
        depth, end = 0, None
        for k in range(n, min(len(lines), n + LONGEST)):
            depth += lines[k].count("[") - lines[k].count("]")
            if depth <= 0:
                end = k
                break
        if end is None:  # never closed: leave the text as it is
            n += 1
            continue
        for k in range(n, end + 1):
            inner = lines[k].strip().lstrip("[").rstrip("]").strip()
            out[k] = inner if k > n and _HEADING.match(inner) and len(inner) < 80 else ""
        n = end + 1
    return out
