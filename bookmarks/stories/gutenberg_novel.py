"""Project Gutenberg novels → actions: chapter headings and paragraphs, dialogue attributed
by `attribution_rules.attribute_dialogue`."""

from __future__ import annotations

import re

from bookmarks.errors import StoryFormatError
from bookmarks.stories.attribution_rules import Draft, attribute_dialogue
from bookmarks.stories.gutenberg import (  # the conventions shared by plays and novels
    _NOVEL_HEAD,
    _SKIP_BLOCK,
    MAX_PARAGRAPH,
    SECTION,
    _blocks,
    _label,
    section_label,
    strip_boilerplate,
)
from bookmarks.stories.illustrations import blank_illustrations

# --- Novels --------------------------------------------------------------------------------


def _novel_heading(block: list[str]) -> re.Match | None:
    line = block[0].strip()
    m = _NOVEL_HEAD.match(line)
    if not m or len(line) > 80 or len(block) > 3:
        return None
    rest = m.group("rest")
    title_like = (rest[:1].isupper() or not rest[:1].isalpha()) and rest[-1:] not in ",;"
    return m if not rest or title_like else None  # not "Chapter one had ended, …"


def _is_prose(block: list[str]) -> bool:
    text = " ".join(s.strip() for s in block)
    return len(block) >= 2 or len(text) >= 60 or any(q in text for q in "\"“‘")


def _is_title(block: list[str]) -> bool:
    text = block[0].strip()
    return (len(block) == 1 and len(text) <= 60 and not any(q in text for q in "\"“‘")
            and (text.isupper() or text[-1:] not in ".!?"))


def novel_paragraphs(body: list[str]) -> list[tuple[int, str, str | None]]:
    """(line, paragraph, chapter) from the first real heading (one followed by prose before
    the next heading: contents lists are not) or, without one, from the first prose."""
    blocks = _blocks(body)
    heads = [n for n, (_, b) in enumerate(blocks) if _novel_heading(b)]
    start = None
    for k, n in enumerate(heads):
        stop = heads[k + 1] if k + 1 < len(heads) else len(blocks)
        if any(_is_prose(b) for _, b in blocks[n + 1:stop]):
            start = n
            above = blocks[start - 1][1] if start else []
            if start - 1 in heads and re.match(r"\s*(?:book|part|volume)\b", above[0], re.I):
                start -= 1  # the BOOK/PART heading right above the chapter
            break
    if start is None:
        start = next((n for n, (_, b) in enumerate(blocks) if _is_prose(b)), len(blocks))
    out: list[tuple[int, str, str | None]] = []
    level1 = chapter = None
    expect_title = False
    for first, block in blocks[start:]:
        if m := _novel_heading(block):
            head = _label(m.group("head"))
            title = " ".join([m.group("rest"), *(s.strip() for s in block[1:])]).strip(" .:")
            if re.match(r"(?:book|part|volume)\b", head, re.I):
                level1, chapter = head + (f": {_label(title, False)}" if title else ""), None
            else:
                chapter = head + (f": {_label(title, False)}" if title else "")
            expect_title = not title
            continue
        if chapter and len(block) == 1 and SECTION.fullmatch(block[0]):
            chapter, expect_title = section_label(chapter, block[0]), False  # `CHAPTER I` ¶ `I`
            continue
        if expect_title and _is_title(block):
            title = _label(block[0].strip(), False)
            if chapter:
                chapter = f"{chapter}: {title}"
            else:
                level1 = f"{level1}: {title}"
            expect_title = False
            continue
        expect_title = False
        if _SKIP_BLOCK.match(" ".join(block)):
            continue
        label = ", ".join(p for p in (level1, chapter) if p) or None
        out.append((first + 1, " ".join(s.strip() for s in block), label))
    return out


def parse_gutenberg_novel(lines: list[str], file: str) -> tuple[list[Draft], dict]:
    body, info = strip_boilerplate(lines, file)
    paragraphs = novel_paragraphs(blank_illustrations(body))
    for line, text, _ in paragraphs:
        if len(text) > MAX_PARAGRAPH:
            raise StoryFormatError(f"a paragraph is longer than {MAX_PARAGRAPH:,} characters.",
                                   file=file, line=line)
    drafts, aliases = attribute_dialogue(paragraphs)
    return drafts, {**info, "aliases": aliases}
