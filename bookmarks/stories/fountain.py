"""Fountain screenplays (https://fountain.io) in and out.

Reading: the title page (`Key: value` lines at the top) gives the title and author; scene
headings (`INT.`, `EXT.`, `EST.`, `INT./EXT.`, `I/E`, or forced with a leading `.`) are
chapters; a character cue (a capitalised line above dialogue, or forced with `@`) names
the speaker, its extensions (`(V.O.)`, `(CONT'D)`) and dual-dialogue `^` dropped; the
dialogue is one action, its line breaks kept (verse stays verse; a line of two spaces keeps
an empty line inside it), a parenthetical joined to the line it introduces; action
paragraphs are narration, their line breaks kept too. Transitions (`CUT TO:`, forced `>`),
notes `[[…]]`, boneyard `/* … */`, sections `#`, synopses `=`, page breaks `===` and
`FADE IN:` / `THE END` are left out; emphasis marks are removed; spaces inside a line are
collapsed. A title page key `Aliases:` whose indented lines are JSON lists
(`["Isolde Marsh", "Isolde", "Captain"]`: a name, then the other names it goes by) gives
the cast's aliases.

Writing: `to_fountain` renders actions so that reading the result gives back the same
characters, texts (line breaks kept, spaces inside a line collapsed, lines trimmed) and
chapters, and the title page the title, author and aliases. What it cannot carry: a story
that returns to "no chapter" after a chapter (it stays in the last one), `[[` in a text,
a name with `(…)` or a trailing `^`, a chapter ending in `#…#`, and presence (who could
perceive each action is derived again on reading).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from bookmarks.errors import StoryFormatError
from bookmarks.stories.names import normalize_name
from bookmarks.stories.prose import Draft
from bookmarks.stories.story import NARRATION, Action, Character

_SCENE = re.compile(r"^(?:INT\.?/EXT|INT\s*/\s*EXT|I/E|INT|EXT|EST)[.\s]", re.I)
_SCENE_NUMBER = re.compile(r"\s*#[\w.\-]+#\s*$")
_TRANSITION = re.compile(r"^[^a-z]*TO:$")
_TITLE_KEY = re.compile(r"^(title|credit|authors?|source|draft date|date|contact|copyright|notes|"
                        r"revision)\s*:", re.I)
_KEY = re.compile(r"^([A-Za-z][A-Za-z ]{0,30}):(.*)$")
_FRAME = re.compile(r"^>?\s*(?:FADE (?:IN|OUT|TO BLACK)|THE END|END|CUT TO BLACK)[.:]?\s*<?$")
_EXTENSION = re.compile(r"\s*\([^)]*\)")
_EMPHASIS = re.compile(r"(\*{1,3}|_)(?=\S)(.+?)(?<=\S)\1")
MAX_PARAGRAPH = 20_000
_ESCAPES = {"\\*": "\ue000", "\\_": "\ue001"}


def _cut(text: str, opener: str, closer: str, file: str) -> str:
    """Text without `opener … closer` spans (their line breaks kept, so line numbers stay).
    An unclosed boneyard `/*` is an error; an unclosed note `[[` is left as text."""
    out: list[str] = []
    pos = 0
    while (start := text.find(opener, pos)) >= 0:
        close = text.find(closer, start + len(opener))
        if close < 0:
            if opener == "/*":
                raise StoryFormatError("this `/*` boneyard is never closed with `*/`.", file=file,
                                       line=text.count("\n", 0, start) + 1)
            break
        out += [text[pos:start], "\n" * text.count("\n", start, close)]
        pos = close + len(closer)
    out.append(text[pos:])
    return "".join(out)


def _plain(text: str, file: str = "", line: int | None = None) -> str:
    """Emphasis marks removed, escaped `\\*` and `\\_` kept as characters; spaces inside each
    line collapsed, line breaks kept (empty lines at either end dropped)."""
    if len(text) > MAX_PARAGRAPH:
        raise StoryFormatError(f"a paragraph is longer than {MAX_PARAGRAPH:,} characters.",
                               file=file, line=line)
    for escaped, mark in _ESCAPES.items():
        text = text.replace(escaped, mark)
    previous = None
    while previous != text:
        previous, text = text, _EMPHASIS.sub(r"\2", text)
    for escaped, mark in _ESCAPES.items():
        text = text.replace(mark, escaped[1])
    return "\n".join(" ".join(row.split()) for row in text.split("\n")).strip("\n")


def _is_cue(line: str, next_line: str) -> bool:
    if line.startswith("@"):
        return len(line) > 1 and bool(next_line.strip())
    name = _EXTENSION.sub("", line).rstrip("^ ").strip()
    return (bool(next_line.strip()) and any(c.isalpha() for c in name) and name == name.upper()
            and not _SCENE.match(line) and not _TRANSITION.match(line)
            and line[:1] not in "!.>~=#[(")


def _cue_name(line: str) -> str:
    name = line[1:] if line.startswith("@") else line
    return " ".join(_EXTENSION.sub("", name).rstrip("^ ").split())


def _scene(line: str) -> str | None:
    if line.startswith(".") and not line.startswith("..") and len(line) > 1:
        return _SCENE_NUMBER.sub("", line[1:]).strip() or None
    if _SCENE.match(line):
        return _SCENE_NUMBER.sub("", line).strip()
    return None


def _title_page(lines: list[str]) -> tuple[dict, int]:
    """The title page's title, author and aliases, and the index of the first line after it."""
    first = next((i for i, ln in enumerate(lines) if ln.strip()), len(lines))
    if first == len(lines) or not _TITLE_KEY.match(lines[first].strip()):
        return {}, 0
    values: dict[str, list[str]] = {}
    key = ""
    i = first
    while i < len(lines) and lines[i].strip():
        raw = lines[i]
        m = _KEY.match(raw.strip()) if not raw[:1].isspace() else None
        if m:
            key = m.group(1).strip().lower()
            values.setdefault(key, [])
            if m.group(2).strip():
                values[key].append(m.group(2).strip())
        elif key:
            values[key].append(raw.strip())
        i += 1
    info: dict = {}
    for field, keys in (("title", ("title",)), ("author", ("author", "authors"))):
        text = next((" ".join(values[k])[:1000] for k in keys if values.get(k)), "")
        if text := _plain(text):
            info[field] = text[:200]
    if aliases := _aliases(values.get("aliases", [])):
        info["aliases"] = aliases
    return info, i


def _aliases(rows: list[str]) -> dict[str, list[str]]:
    """`["Name", "alias", …]` rows → {name: [aliases]}; rows that are not such a list are
    left out (a title page is free text to other tools)."""
    out: dict[str, list[str]] = {}
    for row in rows[:500]:
        try:
            names = json.loads(row)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(names, list) and len(names) > 1 and all(isinstance(n, str) for n in names):
            name, *others = (" ".join(n.split())[:120] for n in names)
            out.setdefault(name, []).extend(o for o in others if o)
    return out


def looks_like_fountain(lines: list[str]) -> bool:
    """A title page and a scene heading, or two scene headings and two cues with dialogue."""
    head = lines[:1000]
    scenes = cues = 0
    for i, raw in enumerate(head):
        line = raw.strip()
        after_blank = i == 0 or not head[i - 1].strip()
        nxt = head[i + 1] if i + 1 < len(head) else ""
        if after_blank and line and _SCENE.match(line):
            scenes += 1
        elif after_blank and line and not line.startswith("@") and _is_cue(line, nxt) \
                and not nxt.strip().isupper():
            cues += 1
    titled = bool(_TITLE_KEY.match(next((ln for ln in head if ln.strip()), "")))
    return (scenes >= 1 and titled) or (scenes >= 2 and cues >= 2)


def parse_fountain(lines: list[str], file: str) -> tuple[list[Draft], dict]:
    text = _cut(_cut("\n".join(lines), "/*", "*/", file), "[[", "]]", file)
    lines = text.split("\n")
    info, i = _title_page(lines)
    drafts: list[Draft] = []
    chapter: str | None = None
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        block_start = i
        while i < len(lines) and (lines[i].strip() or _is_dialogue_gap(lines, i)):
            i += 1
        while block_start < i and (scene := _scene(lines[block_start].strip())) is not None:
            chapter, block_start = scene, block_start + 1
        if block_start < i:
            _read_block(lines, block_start, i, chapter, drafts, file)
    info["line_breaks"] = True  # the texts' line breaks are the writer's (see importers)
    return drafts, info


def _is_dialogue_gap(lines: list[str], i: int) -> bool:
    """Two spaces alone keep a dialogue going across an empty-looking line (or several)."""
    j = i
    while j < len(lines) and lines[j].startswith("  ") and not lines[j].strip():
        j += 1
    return j > i and j < len(lines) and bool(lines[j].strip())


def _read_block(lines: list[str], start: int, end: int, chapter: str | None,
                drafts: list[Draft], file: str) -> None:
    """One paragraph after any scene heading: cue and dialogue, transition or action."""
    block = [ln.strip() for ln in lines[start:end]]
    first = block[0]
    if first.startswith(("#", "=")) or (first.startswith(">") and not first.endswith("<")):
        return  # section, synopsis, page break, forced transition
    if len(block) == 1 and not first.startswith("!") and (_TRANSITION.match(first) or _FRAME.match(first)):
        return  # CUT TO:, FADE IN:, THE END
    if _is_cue(first, block[1] if len(block) > 1 else ""):
        speech = _plain(_dialogue(block[1:]), file, start + 1)
        if speech:
            drafts.append(Draft(start + 1, _cue_name(first) or first, speech, chapter))
        return
    lines_out = [ln[1:] if ln.startswith(("!", "~")) else ln for ln in block]
    if first.startswith(">") and first.endswith("<"):
        lines_out = [ln.strip("<> ") for ln in lines_out]
    if action := _plain("\n".join(lines_out), file, start + 1):
        drafts.append(Draft(start + 1, NARRATION, action, chapter))


def _is_parenthetical(row: str) -> bool:
    return row.startswith("(") and row.endswith(")")


def _dialogue(rows: list[str]) -> str:
    """Dialogue lines as one text: a parenthetical joined to the line after it, a lyric's
    `~` taken off, every other line break kept."""
    out: list[str] = []
    joining = False
    for row in rows:
        text = row[1:] if row.startswith("~") else row
        if joining and text:
            out[-1] = f"{out[-1]} {text}"
        else:
            out.append(text)
        joining = _is_parenthetical(row)
    return "\n".join(out)


# --- Writing -------------------------------------------------------------------------------


def _escape(text: str) -> str:
    text = " ".join("".join(ch for ch in text if ch.isprintable() or ch.isspace()).split())
    return text.replace("*", "\\*").replace("_", "\\_")


def _rows(text: str) -> list[str]:
    """A text's lines, each escaped and its spaces collapsed, empty ones at the ends dropped."""
    rows = [_escape(row) for row in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while rows and not rows[-1]:
        rows.pop()
    while rows and not rows[0]:
        rows.pop(0)
    return rows


_GAP = "  "  # an empty line that does not end the paragraph


def _cue_for(name: str) -> str:

    cue = name.upper()
    plain = (normalize_name(cue) == name and not _SCENE.match(cue) and not _TRANSITION.match(cue)
             and cue[:1] not in "!.>~=#[(@" and "(" not in cue and "^" not in cue
             and any(c.isalpha() for c in cue))
    return cue if plain else f"@{name}"


def _action_for(text: str) -> str:
    rows = _rows(text)
    if not rows:
        return ""
    line = rows[0]
    letters = [c for c in line if c.isalpha()]
    forced = (line[:1] in "!.@~=#>[(" or _SCENE.match(line) or _TRANSITION.match(line)
              or (letters and line == line.upper()) or _is_cue(line, "next"))
    rest = [f"!{row}" if row.startswith(("!", "~")) else row or _GAP for row in rows[1:]]
    return "\n".join([f"!{line}" if forced else line, *rest])


def _dialogue_for(text: str) -> str:
    """Dialogue lines that read back as written: a literal leading `~` and a line in
    parentheses before another (read as a parenthetical, joined to it) get a lyric `~`."""
    rows = _rows(text)
    out = []
    for k, row in enumerate(rows):
        if row.startswith("~") or (_is_parenthetical(row) and k + 1 < len(rows) and rows[k + 1]):
            row = f"~{row}"
        out.append(row or _GAP)
    return "\n".join(out)


def _heading_for(text: str) -> str:
    if _SCENE.match(text) and not _SCENE_NUMBER.search(text):
        return text
    return f". {text}" if text.startswith(".") else f".{text}"  # `..` would read as action


def _title_page_for(title: str, author: str, characters: Sequence[Character]) -> str:
    page = [f"Title: {_escape(title) or 'Untitled'}"]
    if author := _escape(author):
        page.append(f"Author: {author}")
    rows = [json.dumps([c.name, *c.aliases], ensure_ascii=False) for c in characters if c.aliases]
    if rows:
        page.append("Aliases:")
        page += [f"    {row}" for row in rows]
    return "\n".join(page)


def to_fountain(title: str, actions: Iterable[Action], *, author: str = "",
                characters: Sequence[Character] = ()) -> str:
    """Actions as a Fountain screenplay: a title page (title, author, the aliases of
    `characters`), chapters as scene headings, narration as action, speeches (and the
    "environment") as cue and dialogue, line breaks kept. A story that returns to "no
    chapter" keeps the last one."""
    parts = [_title_page_for(title, author, characters)]
    chapter: str | None = None
    for action in actions:
        label = " ".join((action.chapter or "").split())
        if label and label != chapter:
            chapter = label
            parts.append(_heading_for(label))
        if not _rows(action.text):
            continue
        if action.character == NARRATION:
            parts.append(_action_for(action.text))
        else:
            parts.append(f"{_cue_for(action.character)}\n{_dialogue_for(action.text)}")
    return "\n\n".join(parts) + "\n"
