"""Plain prose → actions: paragraphs become narration; quoted dialogue becomes the
speaker's action where the text makes the speaker clear, by the rules in `dialogue.py`,
`attribute.py` and `attribution_rules.py` (speech tags before and after a quotation,
pronouns, action beats, turn-taking, vocatives, a first-person narrator; abstaining where
unsure). Chapter headings ("Chapter 3", "# Part Two") become chapter labels. Project
Gutenberg novels use the same rules (`gutenberg_novel.py`)."""

from __future__ import annotations

import re

from bookmarks.errors import StoryFormatError
from bookmarks.stories.attribution_rules import Draft, attribute_dialogue
from bookmarks.stories.gutenberg import _NUMBER, SECTION, _label, section_label
from bookmarks.stories.illustrations import blank_illustrations
from bookmarks.stories.speakers import merge_variants

__all__ = ["Draft", "attribute_dialogue", "merge_variants", "parse_prose"]

MAX_PARAGRAPH = 20_000
# a heading's word and then a number (`Chapter 3`, `PART I.`, `Stave One: Marley's Ghost`), not
# a sentence that opens on the word (`Part of the crowd ran.`, `Book after book lay about.`)
_CHAPTER = re.compile(rf"^\s*(?:#{{1,6}}\s+(.+)|((?:chapter|part|book|volume|stave|act|scene)\s+"
                      rf"(?:the\s+)?(?:{_NUMBER})(?:\b|(?<=\d))(?:\s*[.:—–-].*|\s+(?-i:[A-Z\"“‘']).*|\s*)))"
                      rf"\s*$", re.IGNORECASE)


def prose_paragraphs(lines: list[str], file: str) -> list[tuple[int, str, str | None]]:
    """(line, paragraph, chapter): paragraphs are separated by blank lines; a short heading
    line that opens a paragraph ("Chapter 3", "# Part Two") names the chapter."""
    out: list[tuple[int, str, str | None]] = []
    chapter: str | None = None
    paragraph: list[str] = []
    start = 1
    titled: bool | None = None  # False: a heading was just read and its title may follow

    def flush() -> None:
        nonlocal paragraph, chapter, titled
        if len(paragraph) == 1 and (m := _NUMBERED_TITLE.fullmatch(paragraph[0])):
            chapter = f"{m['n']}: {_title_case(m['t'].strip(QUOTES + ' .'))}"  # `IV. A CLUE.`
            paragraph, titled = [], None
        if chapter and len(paragraph) == 1 and SECTION.fullmatch(paragraph[0]):
            chapter = section_label(chapter, paragraph[0])  # `CHAPTER I` ¶ `I` ¶ … ¶ `II`
            paragraph, titled = [], None
        if paragraph and titled is False and _chapter_title(paragraph):
            # `CHAPTER III` ¶ `The Husband and Father`: the chapter's title, not narration (no
            # `Husband` on stage); `CHAPTER I.` ¶ `THE STRANGE MAN'S ARRIVAL` reads `CHAPTER I:
            # The Strange Man's Arrival`
            title = paragraph[0].strip().strip(" .")
            title = _title_case(title) if title.isupper() else title
            chapter = f"{(chapter or '').rstrip(' .:')}: {title}"
            paragraph, titled = [], None
        if paragraph:
            titled = None
            text = " ".join(s.strip() for s in paragraph)
            if len(text) > MAX_PARAGRAPH:
                raise StoryFormatError(f"a paragraph is longer than {MAX_PARAGRAPH:,} characters.",
                                       file=file, line=start)
            out.append((start, text, chapter))
        paragraph = []

    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            flush()
            continue
        heading = _CHAPTER.match(line)
        if heading and not paragraph and len(line) < 80:
            chapter = (heading.group(1) or heading.group(2)).strip()
            titled = False
            continue
        if not paragraph:
            start = number
        paragraph.append(line)
    flush()
    return out


# a chapter's number and its title in capitals on one line: `IV. A CLUE.`, `II. "WHEN YOU CALL
# ME THAT, SMILE!"`
_NUMBERED_TITLE = re.compile(r"\s*(?P<n>[IVXLC]{1,7})\.\s+(?P<t>(?=[^a-z]*$)[\"“‘']?[A-Z][^\n]{0,60})\s*")
QUOTES = "\"“”‘’'"


def _chapter_title(paragraph: list[str]) -> bool:
    """The one short line after a chapter heading that names the chapter (`The Husband and
    Father`, `IN WHICH A BEAR APPEARS`): no sentence (no closing `.`, `!`, `?`), no speech."""
    text = paragraph[0].strip()
    return (len(paragraph) == 1 and len(text) <= 60 and text[:1].isupper()
            and not any(q in text for q in "\"“‘") and (text.isupper() or text[-1:] not in ".!?"))


def parse_prose(lines: list[str], file: str) -> tuple[list[Draft], dict]:
    paragraphs = prose_paragraphs(blank_illustrations(lines), file)
    meta = title_and_author(paragraphs)
    if meta:  # the title and by-line name the story; they are no narration (whose names a
        paragraphs = paragraphs[meta.pop("lines"):]  # reader of presence would put on stage)
    if paragraphs and all(chapter is None for _, _, chapter in paragraphs):
        paragraphs = caps_chapters(paragraphs)
    drafts, aliases = attribute_dialogue(paragraphs)
    return drafts, {"aliases": aliases, **meta}


def caps_chapters(paragraphs: list[tuple[int, str, str | None]]) -> list[tuple[int, str, str | None]]:
    """In a text with no `Chapter …` headings, a short line in capitals standing alone
    (`STORY OF THE DOOR`, `SEARCH FOR MR. HYDE`, `II`) is a chapter heading: it names the
    chapter of the paragraphs after it and is no narration."""
    out: list[tuple[int, str, str | None]] = []
    chapter: str | None = None
    numbered = False  # the last paragraph was a chapter's number alone (`2` ¶ `THE HEAVY CHEST`)
    for n, (line, text, _) in enumerate(paragraphs):
        number = bool(SECTION.fullmatch(text))
        quoted = text[:1] in QUOTES and text[-1:] in QUOTES and text.isupper() and len(text) <= 60
        caps = len(text) <= 60 and text.isupper() and not re.search(r"[\"“”‘’!?,;:]", text) \
            and any(len(w.strip(".")) > 1 or w.strip(".") in ("I", "V", "X") for w in text.split())
        if number or caps or quoted and (numbered or n == 0):  # `I` ¶ `"WE ARE SEVEN"`; a
            title = _title_case(text.strip(QUOTES + " ."))  # story opening on `"IN AMBUSH."`
            chapter = f"{chapter}: {title}" if numbered and not number else title
            numbered = number
            continue
        numbered = False
        out.append((line, text, chapter))
    return out


def _title_case(text: str) -> str:
    """`STORY OF THE DOOR` → `Story of the Door` (`gutenberg._label`); a roman numeral stays (`II`)."""
    return text.strip(" .") if re.fullmatch(r"[IVXLC]+\.?", text.strip()) else _label(text, False)


_BY = re.compile(r"by\s+(\S.{0,80})", re.I)


def title_and_author(paragraphs: list[tuple[int, str, str | None]]) -> dict:
    """A text that opens with a title line and a by-line (`The Invisible Man` ¶ `by H. G.
    Wells`, or `By` ¶ `H. G. Wells`) names itself: {"title": …, "author": …, "lines": the
    paragraphs they take}; else {}. Up to three short lines may stand between title and
    by-line (`UNCLE TOM'S CABIN` ¶ `or` ¶ `Life among the Lowly`, `An Every-Day Story.`), and
    a year alone after the by-line (`1891`) goes with them."""
    texts = [" ".join(text.split()) for _, text, _ in paragraphs[:6]]
    for at in range(1, min(len(texts), 5)):
        by, taken = texts[at], at + 1
        if by.casefold() == "by" and at + 1 < len(texts):  # `By` ¶ `Mary Elizabeth Braddon`
            name = texts[at + 1]
            if len(name.split()) <= 6 and not re.search(r"[\"“”.!?;]$", name):
                by, taken = f"by {name}", at + 2
        if m := _BY.fullmatch(by):
            break
    else:
        return {}
    head = texts[:at]
    # `PRIDE AND PREJUDICE.` → `Pride and Prejudice`; `Stalky & Co.` keeps its stop
    title = _title_case(head[0]) if head[0].isupper() else head[0]
    if not all(_title_line(t) for t in head) or not title or len(title.split()) > 12 \
            or title.endswith(";") or title[-1] in "!?" and len(title.split()) > 6:
        return {}
    if taken < len(texts) and re.fullmatch(r"\d{4}\.?", texts[taken]):
        taken += 1  # `1891`: the year of the edition
    return {"title": title, "author": m.group(1), "lines": taken}


def _title_line(text: str) -> bool:
    """A line of a title page: short, no speech (an apostrophe is no quotation mark)."""
    return bool(text) and len(text.split()) <= 12 and not re.search(r"[\"“”]|(?<!\w)[‘’]", text)
