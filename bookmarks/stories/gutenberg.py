"""Project Gutenberg plain text → actions, for plays and for novels.

Everything outside the `*** START OF THE PROJECT GUTENBERG EBOOK … ***` and `*** END OF …
***` lines (the header and the licence) is dropped; a START line without an END line (an
excerpt, or a copy cut short) keeps everything after it. The header's `Title:` and `Author:`
give the story's title and author. Front matter (title page, "Produced by", contents) is
whatever comes before the first heading that is followed by the story itself.

Plays: `NAME.` / `NAME:` / a name alone above its speech, or `NAME. Speech` on one line (a
name in Title case only when the persons list or the text confirms it); a speech runs to
the next blank line, cue or standalone direction, wrapped lines rejoined, inline
`[directions]` kept. A joint speaker (`GWENDOLEN and CECILY.`) gives the speech to the
first, marked `[together with Cecily]`; a speaker heard only in joint speeches still joins
the cast (so directions naming them move them). Bracketed, `_italic_` or deeply indented lines and
paragraphs without a speaker are narration. `ACT I`, `FIRST ACT`, `SCENE 2`, `Scene II.`
are chapters ("Act I, Scene 2"). The persons list (DRAMATIS PERSONAE, THE PERSONS OF THE
PLAY, CHARACTERS, CAST) names the cast: a speaker label that abbreviates a listed name
(`HAM.`, `Lady B.`, `Chasuble`) becomes that person, the label kept as an alias. Listed
persons who never speak are left out.

Novels: `CHAPTER I` (with the title line after it), `BOOK`/`PART`/`VOLUME` headings are
chapters; paragraphs go to `prose.attribute_dialogue`.
"""

from __future__ import annotations

import re

from bookmarks.errors import StoryFormatError
from bookmarks.stories.names import normalize_name

_START = re.compile(r"^\s*\*{3}\s*START OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK\b", re.I)
_END = re.compile(r"^\s*\*{3}\s*END OF (?:THE|THIS) PROJECT GUTENBERG E-?BOOK\b", re.I)
_BOILER_BLOCK = re.compile(r"^\s*(?:produced by|e-?text prepared by|transcribed by|transcriber'?s note|"
                           r"end of (?:the )?project gutenberg)", re.I)
_SKIP_BLOCK = re.compile(r"^\s*(?:\[(?:illustration|footnote)\b.*|(?:the end|finis)\.?|[*\s.]+)$", re.I)
_NUMBER = (r"(?-i:[IVXLCDM]+|[ivx]+)|\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
           r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|final")
_ORDINAL = r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|final"
_UNIT = rf"(?:(?:act|scene)\s+(?:the\s+)?(?:{_NUMBER})|(?:{_ORDINAL})\s+(?:act|scene))\b"
_PLAY_HEAD = re.compile(rf"^(?P<head>{_UNIT}(?:\s*[.,:;]?\s*{_UNIT})?)(?:\s*[.:;,—–-]+\s*(?P<rest>.*)|\s*)$",
                        re.I)
_NOVEL_HEAD = re.compile(rf"^(?P<head>(?:chapter|book|part|volume|stave)\s+(?:the\s+)?(?:{_NUMBER}))\b"
                         r"\s*[.:—–-]*\s*(?P<rest>.*)$", re.I)
_PERSONS = re.compile(r"^\s*(?:dramatis\s+person(?:ae|æ)|(?:the\s+)?persons\s+(?:of\s+the\s+"
                      r"(?:play|drama|comedy|tragedy)|represented|in\s+the\s+play)|(?:the\s+)?"
                      r"characters(?:\s+(?:of|in)\s+the\s+play)?|(?:the\s+)?cast(?:\s+of\s+characters)?)"
                      r"\s*[.:]?\s*$", re.I)
_LIST_END = re.compile(r"^(?:the\s+)?(?:scenes?|time|place|setting)\b", re.I)
_DROP_LINE = re.compile(r"^(?:(?:the\s+)?end(?:\s+of\s+(?:the\s+)?(?:act|scene|play|part)\b.*)?|finis|"
                        r"scene|the\s+scene)\s*[.:]?$", re.I)
_STAGE_WORD = re.compile(r"^(?:enter|re-enter|exit|exeunt|manet|manent|flourish|alarum)\b", re.I)
_RESERVED = frozenset("act scene scenes chapter book part volume enter exit exeunt re-enter manet manent "
                      "end finis curtain time place note notes setting contents dramatis persons "
                      "characters cast illustration produced".split())
_JOINT = re.compile(r"\s*,\s*|\s+(?:and|AND|&)\s+")
_WORD = re.compile(r"^(?:[A-Z][A-Z'’\-]*\.?|[A-Z][a-z'’\-]+\.?|[A-Z]\.|Mc[A-Z][a-z]+\.?|of|de|la|le)$")
_ROMAN = re.compile(r"^[IVXLCDM]+$", re.I)
MAX_PARAGRAPH = 20_000


# a paragraph that is only a section's number inside a chapter (`I`, `II.`, `3`): no title
# of the chapter and no narration, but the chapter's next section (`CHAPTER I §II`)
SECTION = re.compile(r"\s*(?:[IVXLC]{1,7}|\d{1,3})\.?\s*")


def section_label(chapter: str, number: str) -> str:
    return f"{chapter.split(' §')[0]} §{number.strip().rstrip('.')}"


_ITALIC = re.compile(r"(?<![^\W_])_+|_+(?![^\W_])")
_FOOTNOTE = re.compile(r"(?<=\S)\[\d{1,4}\]|<\d{1,3}>")


def clean_markup(line: str) -> str:
    """A line without italic markers (`_Enter_ KING`, `_[Aside.]_`, `out_._]`) and footnote
    markers (`us[107]`, `<2>`); an underscore inside a word stays."""
    return _ITALIC.sub("", _FOOTNOTE.sub("", line))


def _normalize(name: str) -> str:

    return normalize_name(name)


# --- Boilerplate ---------------------------------------------------------------------------


def is_gutenberg(lines: list[str]) -> bool:
    return any(_START.match(ln) or _END.match(ln) for ln in lines)


def strip_boilerplate(lines: list[str], file: str) -> tuple[list[str], dict[str, str]]:
    """The body with header, licence and "Produced by" blanked out (line numbers stay), and
    the header's title and author."""
    start = next((i for i, ln in enumerate(lines) if _START.match(ln)), None)
    after = -1 if start is None else start
    end = next((i for i, ln in enumerate(lines) if i > after and _END.match(ln)), None)
    info: dict[str, str] = {}
    if start is None and end is None:
        body = list(lines)
    elif start is None:
        raise StoryFormatError(
            "this Project Gutenberg text has an END marker but no `*** START OF THE PROJECT "
            "GUTENBERG EBOOK … ***` line before it; download the file again, or delete the END "
            "line to import the text as it is.", file=file, line=end + 1)
    else:  # no END line (an excerpt, a copy cut short): the story runs to the file's end
        stop = len(lines) if end is None else end
        body = [""] * (start + 1) + lines[start + 1:stop] + [""] * (len(lines) - stop)
        info = _header(lines[:start])
    for first, block in _blocks(body):
        if _BOILER_BLOCK.match(block[0]):
            body[first:first + len(block)] = [""] * len(block)
    if not any(ln.strip() for ln in body):
        if start is None:
            raise StoryFormatError("there is no story text.", file=file)
        if end is None:
            raise StoryFormatError(f"there is no story text after the START marker (line "
                                   f"{start + 1}).", file=file, line=start + 1)
        raise StoryFormatError(f"there is no story text between the START (line {start + 1}) and "
                               f"END (line {end + 1}) markers.", file=file, line=start + 1)
    return body, info


def _header(header: list[str]) -> dict[str, str]:
    info = {}
    for line in header:
        if m := re.match(r"^\s*(Title|Author)\s*:\s*(\S.*)$", line):
            info.setdefault(m.group(1).lower(), " ".join(m.group(2).split())[:200])
    return info


def _blocks(lines: list[str], start: int = 0) -> list[tuple[int, list[str]]]:
    """Runs of non-blank lines: (0-based index of the first line, the lines)."""
    out: list[tuple[int, list[str]]] = []
    for i in range(start, len(lines)):
        if not lines[i].strip():
            continue
        if out and out[-1][0] + len(out[-1][1]) == i:
            out[-1][1].append(lines[i])
        else:
            out.append((i, [lines[i]]))
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


_SMALL_WORDS = frozenset("a an and as at by for in of on or the to with".split())


def _label(text: str, keep_numbers: bool = True) -> str:
    """`CHAPTER IV` → `Chapter IV`, `FIRST ACT` → `First Act`, `THE GIRL'S HAT` → `The Girl's Hat`,
    `STORY OF THE DOOR` → `Story of the Door`."""
    words = []
    for word in text.split():
        if keep_numbers and _ROMAN.match(word.strip(".")) and len(words) == 1:
            words.append(word.upper())
        elif words and word.isupper() and word.casefold() in _SMALL_WORDS:
            words.append(word.lower())
        elif word.isupper() or word.islower() and len(words) == 0:
            words.append(word[:1].upper() + word[1:].lower())
        else:
            words.append(word)
    return " ".join(words).strip(" .:")
