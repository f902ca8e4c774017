"""Project Gutenberg plays → actions: the persons list as the cast, speaker cues in every
printed convention, directions, acts and scenes (see gutenberg.py for the conventions)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from bookmarks.errors import StoryFormatError
from bookmarks.stories.gutenberg import (  # the conventions shared by plays and novels
    _DROP_LINE,
    _JOINT,
    _LIST_END,
    _PERSONS,
    _PLAY_HEAD,
    _RESERVED,
    _STAGE_WORD,
    _UNIT,
    _WORD,
    _blocks,
    _indent,
    _label,
    _normalize,
    strip_boilerplate,
)
from bookmarks.stories.prose import Draft
from bookmarks.stories.story import NARRATION

# --- Play or novel -------------------------------------------------------------------------


def gutenberg_kind(lines: list[str]) -> str:
    """"gutenberg-play" when speaker cues make up the text, else "gutenberg-novel"."""
    try:
        body, _ = strip_boilerplate(lines, "")
    except StoryFormatError:
        body = lines
    cast = Cast(persons_list(body)[0])
    known = _known_labels(body, cast)
    nonblank = sum(1 for ln in body if ln.strip())
    cues = sum(1 for _, line, more in _cue_candidates(body) if _cue(line, cast, known, START, more))
    return "gutenberg-play" if cues >= 3 and cues >= 0.1 * nonblank else "gutenberg-novel"


# --- The cast of a play --------------------------------------------------------------------


def persons_list(body: list[str]) -> tuple[list[str], int]:
    """The names in the list of persons, and the index of the line after the list."""
    begin = next((i for i, ln in enumerate(body) if _PERSONS.match(ln)), None)
    if begin is None:
        return [], 0
    names: list[str] = []
    blanks, base, i = 0, None, begin + 1
    while i < len(body):
        raw, line = body[i], body[i].strip()
        if not line:
            blanks += 1
            if blanks >= 2 and names:
                break
        elif _PLAY_HEAD.match(line) or _LIST_END.match(line):
            break
        else:
            blanks = 0
            base = _indent(raw) if base is None else base
            if _indent(raw) <= base + 1 and line[0].isupper() and (name := _person_name(line)):
                names.append(name)
        i += 1
    return names, i


def _person_name(entry: str) -> str | None:
    """`JOHN WORTHING, J.P.` → `John Worthing`; `Rev. Canon Chasuble, D.D.` → `Rev. Canon Chasuble`."""
    words = re.split(r"\s*(?:[,;(:]|\s[—–-]+\s|\s--\s)", entry, maxsplit=1)[0].split()
    if words and words[0].strip(".").isupper() and len(words[0].strip(".")) >= 2:
        words = _take_while(words, lambda w: w.isupper() or w in ("of", "de", "la"))  # HAMLET, prince
    else:
        words = _take_while(words, lambda w: w[:1].isupper() or w in ("of", "de", "la"))
    name = _normalize(" ".join(words[:5]))
    return name if len(name) >= 2 else None


def _take_while(words: list[str], keep: Callable[[str], bool]) -> list[str]:
    out = []
    for word in words:
        if not keep(word):
            break
        out.append(word)
    return out


def _tokens(name: str) -> list[str]:
    return [w.strip(".,").casefold() for w in name.split() if w.strip(".,")]


@dataclass
class Cast:
    """The persons of the play, and which person each speaker label names."""

    persons: list[str]
    aliases: dict[str, set[str]] = field(default_factory=dict)

    def match(self, label: str) -> str | None:
        """The listed person a label names: the full name, or an abbreviation of its words
        in order (`Ham` → Hamlet, `Lady B` → Lady Bracknell); None when none or several."""
        said = _tokens(label)
        if not said or len(said[0]) < 2:
            return None
        best: list[tuple[int, str]] = []
        for person in self.persons:
            score = _abbreviates(said, _tokens(person))
            if score is not None:
                best.append((score, person))
        best.sort(reverse=True)
        if best and (len(best) == 1 or best[0][0] > best[1][0]):
            return best[0][1]
        return None

    def resolve(self, label: str) -> str:
        name = _normalize(label)
        person = self.match(name)
        if person and person != name:
            self.aliases.setdefault(person, set()).add(name)
        return person or name


def _abbreviates(said: list[str], full: list[str]) -> int | None:
    """How many of `said` equal a word of `full` when each is a prefix of the next unused
    word of `full`, in order; None when they do not fit."""
    exact, k = 0, 0
    for n, word in enumerate(said):
        short_ok = n > 0 or len(word) >= 3  # `Lady B`, but not `Mr` for `Mrs.`
        while k < len(full) and not (full[k] == word or short_ok and full[k].startswith(word)):
            k += 1
        if k == len(full):
            return None
        exact += word == full[k]
        k += 1
    return exact


# --- Speaker cues --------------------------------------------------------------------------


@dataclass
class Cue:
    """A speaker cue: the label (several for a joint speech) and any speech on its line."""

    names: list[str]
    speech: str


START, HANGING, INSIDE = 0, 1, 2  # where a cue stands: paragraph start, hanging layout, inside


def _valid_label(label: str, cast: Cast, known: set[str], where: int) -> bool:
    """A name of up to four words: capitalised (`MRS. P`), or confirmed by the persons list
    or the text; inside a paragraph it must be both, unless the layout hangs (`  Ham. …`
    with its speech indented deeper below)."""
    words = label.split()
    if not 1 <= len(words) <= 4 or not all(_WORD.match(w) for w in words):
        return False
    letters = [c for c in label if c.isalpha()]
    upper = len(letters) >= 2 and all(c.isupper() for c in letters)
    confirmed = label.casefold().strip(". ") in known or cast.match(label) is not None
    if where == INSIDE:
        return upper and confirmed
    if where == HANGING:
        return confirmed
    return confirmed or upper and words[0].strip(".").casefold() not in _RESERVED


def _cue(line: str, cast: Cast, known: set[str], where: int, more: bool) -> Cue | None:
    """A speaker cue at the start of `line`: the longest label before `.`/`:` (or the whole
    line when it is only a name and more lines follow) whose every joint part is a valid
    name; Title-case names and cues inside a paragraph only when known."""
    if not line or not line[0].isupper():
        return None
    splits = [(line[:m.start()], line[m.start():] if m.group() in "[(" else line[m.end():])
              for m in re.finditer(r"[.:\[(]", line[:64])]
    if len(line) <= 64:
        splits.append((line, ""))
    best: Cue | None = None
    for label, rest in splits:
        if rest[:1] not in ("", " ", "\t", "[", "(") or not rest.strip() and (not more or where == HANGING):
            continue
        rest = re.sub(r"^(\[[^\]]*\]|\([^)]*\))\s*[.:]", r"\1", rest)
        parts = [p for p in _JOINT.split(label.strip()) if p]
        if parts and all(_valid_label(p, cast, known, where) for p in parts):
            best = Cue(parts, rest.strip())
    return best


def _cue_candidates(body: list[str]) -> list[tuple[int, str, bool]]:
    """Lines where a cue may stand (a paragraph's first line, or a capitalised line alone),
    and whether more lines follow in the paragraph."""
    return [(i, line, i + 1 < len(body) and bool(body[i + 1].strip()))
            for i, raw in enumerate(body) if (line := raw.strip())
            and (i == 0 or not body[i - 1].strip() or line.rstrip(".:").isupper())]


def _known_labels(body: list[str], cast: Cast) -> set[str]:
    """Speaker labels the text confirms: a capitalised label used as a cue at least twice,
    a Title-case one (`Algernon. Speech`) at least three times."""
    counts: dict[tuple[str, bool], int] = {}
    for i, line, more in _cue_candidates(body):
        if cue := _cue(line, cast, set(), START, more):
            keys = [(p.casefold().strip(". "), True) for p in cue.names]
        elif i == 0 or not body[i - 1].strip():
            m = re.match(r"^([A-Z][a-z'’\-]+\.?(?:\s[A-Z][a-z'’\-]*\.?){0,2})[.:]\s+\S", line)
            keys = [(m.group(1).casefold().strip(". "), False)] if m else []
        else:
            keys = []
        for key in keys:
            counts[key] = counts.get(key, 0) + 1
    return {label for (label, upper), n in counts.items() if n >= (2 if upper else 3)}


# --- Plays ---------------------------------------------------------------------------------


@dataclass
class _PlayWriter:
    cast: Cast
    drafts: list[Draft] = field(default_factory=list)
    act: str | None = None
    scene: str | None = None
    speaker: list[str] | None = None
    speech: list[str] = field(default_factory=list)
    speech_line: int = 0
    cue_line: int = -1
    narration: list[str] = field(default_factory=list)
    narration_line: int = 0
    indent: int = 0

    @property
    def chapter(self) -> str | None:
        return ", ".join(p for p in (self.act, self.scene) if p) or None

    def flush(self, end_speech: bool = False) -> None:
        if self.narration:
            self.drafts.append(Draft(self.narration_line, NARRATION, " ".join(self.narration),
                                     self.chapter))
            self.narration = []
        if self.speech and self.speaker:
            first, *others = self.speaker
            text = " ".join(self.speech)
            if others:
                text = f"[together with {' and '.join(others)}] {text}"
            self.drafts.append(Draft(self.speech_line, first, text, self.chapter))
            self.speech = []
        if end_speech:
            self.speaker = None

    def heading(self, head: str, rest: str, line: int) -> None:
        self.flush(end_speech=True)
        units = re.findall(_UNIT, head, re.I)
        for unit in units:
            if re.search(r"\bact\b", unit, re.I):
                self.act, self.scene = _label(unit), None
            else:
                self.scene = _label(unit)
        if rest:
            self.text(rest, line)

    def cue(self, cue: Cue, line: int, indent: int) -> None:
        self.flush()
        self.speaker = [self.cast.resolve(n) for n in cue.names]
        self.speech_line = self.cue_line = line
        self.indent = indent
        if cue.speech:
            self.speech.append(cue.speech)

    def direction(self, text: str, line: int) -> None:
        self.flush()
        self.drafts.append(Draft(line, NARRATION, text, self.chapter))

    def text(self, text: str, line: int) -> None:
        if self.speaker:
            if not self.speech:
                self.speech_line = line
            self.speech.append(text)
        else:
            if not self.narration:
                self.narration_line = line
            self.narration.append(text)


def _standalone(lines: list[str], i: int) -> tuple[int, str] | None:
    """A direction that starts line i and fills whole lines (`[Exit.]`, `(Aside)`,
    `_Enter Lane._`): the index of its last line and its text without the brackets."""
    closer = {"[": "]", "(": ")", "_": "_"}.get(lines[i].strip()[:1])
    if closer is None:
        return None
    text = "\n".join(s.strip() for s in lines[i:i + 30])
    opener = text[0]
    depth, k = 0, 0
    for k, ch in enumerate(text):
        if ch == closer and k > 0:
            depth -= 1
            if depth == 0:
                break
        elif ch == opener:
            depth += 1
    else:
        return None
    tail_end = text.find("\n", k)
    tail = text[k + 1:] if tail_end < 0 else text[k + 1:tail_end]
    if tail.strip(" .,;") or depth:
        return None
    inner = " ".join(text[1:k].split())
    return i + text[:k].count("\n"), inner


def _where(block: list[str], i: int, number: int, writer: _PlayWriter) -> int:
    """START for a paragraph's first line; HANGING where the previous line was the current
    speaker's cue or was indented deeper than this one (and this one is no deeper than the
    cue); else INSIDE."""
    if i == 0:
        return START
    hanging = _indent(block[i - 1]) > _indent(block[i]) or writer.cue_line == number - 1
    return HANGING if hanging and writer.speaker and _indent(block[i]) <= writer.indent else INSIDE


def play_start(body: list[str], after: int, cast: Cast, known: set[str]) -> int:
    """Where the play itself begins: the act (or scene) heading above the first confirmed
    speech after the persons list, or the directions right before that speech."""
    act = scene = None
    blocks = _blocks(body, after)
    for n, (first, block) in enumerate(blocks):
        for k, raw in enumerate(block):
            line = raw.strip()
            if _PLAY_HEAD.match(line):
                if re.match(r"^(?:act\b|\w+\s+act\b)", line, re.I):
                    act, scene = first + k, None
                else:
                    scene = first + k
                continue
            cue = _cue(line, cast, known, START if k == 0 else INSIDE, k + 1 < len(block))
            if cue and all(p.casefold().strip(". ") in known or cast.match(p) for p in cue.names):
                if act is not None or scene is not None:
                    return min(i for i in (act, scene) if i is not None)
                start = first
                for prev_first, prev in reversed(blocks[:n]):
                    if _standalone(prev, 0) is None and not _STAGE_WORD.match(prev[0].strip()):
                        break
                    start = prev_first
                return start
    return after


def parse_gutenberg_play(lines: list[str], file: str) -> tuple[list[Draft], dict]:
    body, info = strip_boilerplate(lines, file)
    persons, after = persons_list(body)
    cast = Cast(persons)
    known = _known_labels(body, cast)
    writer = _PlayWriter(cast)
    for first, block in _blocks(body, play_start(body, after, cast, known)):
        writer.flush(end_speech=True)
        i = 0
        while i < len(block):
            raw, line, number = block[i], block[i].strip(), first + i + 1
            if i == 0 and (m := _PLAY_HEAD.match(line)) and len(line) < 120:
                writer.heading(m.group("head"), (m.group("rest") or "").strip(), number)
            elif (i == 0 or not writer.speaker) and _DROP_LINE.match(line):
                pass
            elif found := _standalone(block, i):
                i, inner = found
                if inner and not re.match(r"(?:illustration|footnote)\b", inner, re.I):
                    writer.direction(inner, number)
            elif writer.speaker and _indent(raw) >= writer.indent + 8 and _STAGE_WORD.match(line):
                writer.direction(line, number)
            elif cue := _cue(line, cast, known, _where(block, i, number, writer), i + 1 < len(block)):
                writer.cue(cue, number, _indent(raw))
            else:
                writer.text(line, number)
            i += 1
    writer.flush(end_speech=True)
    aliases = {name: sorted(labels) for name, labels in cast.aliases.items()}
    return writer.drafts, {**info, "aliases": aliases}
