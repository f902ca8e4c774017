"""Project Gutenberg plays → actions: the persons list as the cast (gutenberg_cast.py),
speaker cues in every printed convention, directions, acts and scenes (see gutenberg.py
for the conventions).

Copies differ in their markup, and the stored text keeps none of it: `_italic_` markers
(`_Enter_ KING`, `_[To the PORTER.]_`, `_King._`) and footnote markers (`[107]`, `<2>`) go,
directions keep their brackets. Also read:
- a label in italics (`_Ham._ Speech`), and a label alone in its paragraph, its speech
  (after the speaker's own directions) in the paragraphs below;
- a joint speech printed with braces (`_Ros._ }` / `} We will haste us.` / `_Guil._}`);
- a paragraph without a cue that continues the speech a direction interrupted (indented
  as that speech is, or starting in lower case), and a paragraph that opens with a
  direction and goes on in words: the direction, then the speech it continues;
- a bracket never closed (`[Exit.`) ends with its line; a stray closing bracket is dropped;
  a direction printed far to the right of a speech line (`Words, words.        Exit.`) is
  a direction.
- A direction inside a speech that brings someone on or takes someone off (directions.py)
  splits the speech: the words before it, the direction, the words after it are actions
  of their own, so that who heard which words can differ (see presence.py). A speaker's
  own directions before their first words stay with the speech (`[calls out from his
  room]. Is that my little lark?`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bookmarks.errors import StoryFormatError
from bookmarks.stories.directions import moves_anyone, split_speech
from bookmarks.stories.gutenberg import (  # the conventions shared by plays and novels
    _DROP_LINE,
    _JOINT,
    _PLAY_HEAD,
    _RESERVED,
    _STAGE_WORD,
    _UNIT,
    _WORD,
    _blocks,
    _indent,
    _label,
    clean_markup,
    strip_boilerplate,
)
from bookmarks.stories.gutenberg_cast import Cast, persons_list
from bookmarks.stories.prose import Draft
from bookmarks.stories.story import NARRATION

# --- Play or novel -------------------------------------------------------------------------


def gutenberg_kind(lines: list[str]) -> str:
    """"gutenberg-play" when speaker cues make up the text, else "gutenberg-novel"."""
    return "gutenberg-play" if looks_like_play(lines) else "gutenberg-novel"


def looks_like_play(lines: list[str]) -> bool:
    """Speaker cues in a printed convention make up a tenth of the text (three at least)."""
    if len(lines) > 12_000:  # a long text: its start, middle and end tell
        mid = len(lines) // 2
        lines = lines[:4000] + [""] + lines[mid - 2000:mid + 2000] + [""] + lines[-4000:]
    try:
        body, _ = strip_boilerplate(lines, "")
    except StoryFormatError:
        body = lines
    body = [clean_markup(ln) for ln in _join_braces(body)]
    cast = Cast(persons_list(body)[0])
    known = _known_labels(body, cast)
    nonblank = sum(1 for ln in body if ln.strip())
    cues = sum(1 for _, line, more in _cue_candidates(body) if _cue(line, cast, known, START, more))
    return cues >= 3 and cues >= 0.1 * nonblank


def has_persons_list(lines: list[str]) -> bool:
    return bool(persons_list(lines)[0])


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
    confirmed = label.casefold().strip(". ") in known or cast.match(label) is not None and (
        upper or not cast.upper_labels)  # in a play of capital labels, a Title one must recur
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


def _plain(text: str) -> str:
    """Stored text: no markup, single spaces, brackets balanced."""
    text = " ".join(clean_markup(text).split())
    if text.count("[") > text.count("]") and text.startswith("["):
        text = text[1:].lstrip()
    if text.count("]") > text.count("[") and text.endswith("]"):
        text = text[:-1].rstrip()
    return text


def _unwrap(direction: str) -> str:
    """A direction as an action of its own: stored text without its outer brackets."""
    text = _plain(direction)
    while len(text) > 2 and text[0] + text[-1] in ("[]", "()") and \
            text.count(text[0]) == 1 and text.count(text[-1]) == 1:
        text = text[1:-1].strip()
    return text


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
    spoken: bool = False  # the current speaker has said words (not only directions)
    interrupted: bool = False  # a direction stands between the speech and what follows
    joint: set[str] = field(default_factory=set)  # who spoke in a joint speech, not first

    @property
    def chapter(self) -> str | None:
        return ", ".join(p for p in (self.act, self.scene) if p) or None

    def flush(self, end_speech: bool = False) -> None:
        if self.narration:
            self.drafts.append(Draft(self.narration_line, NARRATION, _plain(" ".join(self.narration)),
                                     self.chapter))
            self.narration = []
        if self.speech and self.speaker and (self.spoken or end_speech):  # (not only directions)
            first, *others = self.speaker
            text = _plain(" ".join(self.speech))
            if others:
                text = f"[together with {' and '.join(others)}] {text}"
                self.joint.update(others)
            self.speak(first, text)
            self.speech = []
        if end_speech:
            self.speaker = None
            self.spoken = self.interrupted = False

    def speak(self, speaker: str, text: str) -> None:
        """The speech, split at the directions after its first words that move someone."""
        words: list[str] = []
        said = False
        for is_direction, piece in split_speech(text, whole=True):
            if is_direction and said and moves_anyone(piece):
                if "".join(words).strip(" .,;:-—"):
                    self.drafts.append(Draft(self.speech_line, speaker, "".join(words).strip(),
                                             self.chapter))
                words = []
                self.drafts.append(Draft(self.speech_line, NARRATION, _unwrap(piece), self.chapter))
            else:
                words.append(piece)
                said = said or not is_direction and bool(piece.strip(" .,;:-—"))
        if "".join(words).strip(" .,;:-—"):
            self.drafts.append(Draft(self.speech_line, speaker, "".join(words).strip(), self.chapter))

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
        self.flush(end_speech=True)
        self.speaker = [self.cast.resolve(n) for n in cue.names]
        self.speech_line = self.cue_line = line
        self.indent = indent
        if cue.speech:
            self.text(cue.speech, line)

    def direction(self, text: str, line: int) -> None:
        text = _unwrap(text)
        if self.speaker and not self.spoken:  # the speaker's own, before their words
            self.text(f"[{text}]", line, words=False)
            return
        self.flush()
        if self.speaker:  # the speech may go on after it, unless the speaker went out
            names = {w.casefold() for n in self.speaker for w in re.findall(r"[A-Za-z]{3,}", n)}
            said = {w.casefold() for w in re.findall(r"[A-Za-z]{3,}", text)}
            going = re.match(r"^\W*(?:exit|exeunt)\b[^A-Za-z]*$", text, re.I) or \
                re.search(r"\bexeunt\b", text, re.I) or names & said and moves_anyone(text)
            self.interrupted = not going
            if going:
                self.speaker = None
        self.drafts.append(Draft(line, NARRATION, text, self.chapter))

    def text(self, text: str, line: int, words: bool = True) -> None:
        if words and self.speaker and (tail := _TRAILING_DIRECTION.search(text)):
            self.text(text[:tail.start()].strip(), line)  # `Words, words.            Exit.`
            self.direction(tail.group(1).strip(" []"), line)
            return
        if self.speaker:
            if not self.speech:
                self.speech_line = line
            self.speech.append(text)
            if words and any(not d and p.strip(" .,;:") for d, p in split_speech(text)):
                self.spoken, self.interrupted = True, False
        else:
            if not self.narration:
                self.narration_line = line
            self.narration.append(text)


def _standalone(lines: list[str], i: int) -> tuple[int, str] | None:
    """A direction that starts line i and fills whole lines (`[Exit.]`, `(Aside)`,
    `_Enter Lane._`, `[Exit.` never closed): the index of its last line and its text
    without the brackets."""
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
        if opener == "_" or not (first := lines[i].strip()) or "]" in first or ")" in first:
            return None
        return i, first[1:].strip()  # never closed: the direction ends with its line
    tail_end = text.find("\n", k)
    tail = text[k + 1:] if tail_end < 0 else text[k + 1:tail_end]
    if tail.strip(" .,;:])_") or depth:
        return None
    inner = " ".join(text[1:k].split())
    return i + text[:k].count("\n"), inner


# a line of its own inside a speech that is an entrance or exit (`Enter Cassio.`, `Exit.`)
_INLINE_ENTRANCE = re.compile(r"^(?:(?:re-?)?enter\s+(?:the\s+)?[A-Z]|exit\b|exeunt\b)[^.!?]{0,60}[.!?]?$")
# a direction printed far to the right of a speech line
_TRAILING_DIRECTION = re.compile(r"(?<=\S)\s{6,}(\[?(?:Exit|Exeunt|Enter|Re-enter|Dies|Dying|Falls)\b"
                                 r"[^\]]*\]?)\s*$")
_LEADING_DIRECTION = re.compile(r"^(_?\[[^\]]*\]_?|_?\([^)]*\)_?)[.:,]?\s+(?=\S)")


def _join_braces(body: list[str]) -> list[str]:
    """A joint speech printed with braces — `_Ros._ }` / `} We will haste us.` / `_Guil._}`
    — on one line: `_Ros._ and _Guil._. We will haste us.` (line numbers kept)."""
    out = list(body)
    for first, block in _blocks(body):
        parts = [re.match(r"^\s*([^{}]{0,30}?)\s*}\s*(.*)$", ln) for ln in block]
        if len(block) < 2 or not all(parts) or any("{" in ln for ln in block):
            continue
        labels = [m.group(1).rstrip(". ") for m in parts if m.group(1).strip()]
        words = " ".join(m.group(2).strip() for m in parts if m.group(2).strip())
        if len(labels) >= 2 and words:
            indent = " " * _indent(block[0])
            joined = f"{indent}{' and '.join(labels)}. {words}"
            out[first:first + len(block)] = [joined] + [""] * (len(block) - 1)
    return out


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


def _continues(writer: _PlayWriter, raw: str, line: str, led: bool, known: set[str]) -> bool:
    """Whether a paragraph without a cue goes on with the current speech: right after the
    speaker's cue (nothing said yet); after a direction that interrupted the speech; after
    the speech itself when indented as the speech is or starting in lower case; or when the
    paragraph opened with a direction and these are its words (`led`). Never a heading, a
    line in capitals (`ACT DROP`) or one that opens with Enter / Exit."""
    if not writer.speaker or _STAGE_WORD.match(line) or _PLAY_HEAD.match(line):
        return False
    if not writer.spoken:
        return True
    if led:
        return True
    if re.sub(r"[^A-Za-z]", "", line).isupper():
        return False
    first = re.match(r"[A-Z][A-Z'’-]+\b", line)
    if first and (first.group().casefold() in known or writer.cast.match(first.group())):
        return False  # `FAUSTUS discovered in his study.`: a direction naming someone
    return writer.interrupted or line[:1].islower() or 0 < _indent(raw) <= writer.indent


def parse_gutenberg_play(lines: list[str], file: str) -> tuple[list[Draft], dict]:
    body, info = strip_boilerplate(lines, file)
    body = _join_braces(body)
    plain = [clean_markup(ln) for ln in body]
    persons, after = persons_list(plain)
    cast = Cast(persons)
    known = _known_labels(plain, cast)
    cast.upper_labels = _upper_labels(plain, cast)
    writer = _PlayWriter(cast)
    for first, block in _blocks(body, play_start(plain, after, cast, known)):
        writer.flush()
        i = 0
        while i < len(block):
            raw, line, number = block[i], plain[first + i].strip(), first + i + 1
            if i == 0 and (m := _PLAY_HEAD.match(line)) and len(line) < 120:
                writer.heading(m.group("head"), (m.group("rest") or "").strip(), number)
            elif (i == 0 or not writer.speaker) and _DROP_LINE.match(line):
                pass
            elif raw.lstrip().startswith("_") and _alone_confirmed(line, cast, known):
                writer.cue(Cue([line.rstrip(".: ")], ""), number, _indent(raw))
            elif found := _standalone(block, i):
                i, inner = found
                if inner and not re.match(r"(?:illustration|footnote)\b", inner, re.I):
                    writer.direction(inner, number)
            elif writer.speaker and _STAGE_WORD.match(line) and (
                    _indent(raw) >= writer.indent + 8 or i and _indent(raw) > _indent(block[i - 1])
                    or _INLINE_ENTRANCE.match(line)):
                writer.direction(line, number)
            elif cue := _cue(line, cast, known, _where(block, i, number, writer),
                             i + 1 < len(block) or _alone_confirmed(line, cast, known)):
                writer.cue(cue, number, _indent(raw))
            elif i == 0 and (lead := _LEADING_DIRECTION.match(raw.strip())):
                writer.direction(lead.group(1).strip(" _")[1:-1], number)
                rest = clean_markup(raw.strip()[lead.end():])
                if (c := _cue(rest, cast, known, START, True)) and c.speech:
                    writer.cue(c, number, _indent(raw))
                elif _continues(writer, raw, rest, True, known):
                    writer.text(rest, number)
                else:
                    writer.flush(end_speech=True)
                    writer.text(rest, number)
            else:
                if i == 0 and not _continues(writer, raw, line, False, known):
                    writer.flush(end_speech=True)
                writer.text(plain[first + i].strip(), number)
            i += 1
    writer.flush(end_speech=True)
    aliases = {name: sorted(labels) for name, labels in cast.aliases.items()}
    return writer.drafts, {**info, "aliases": aliases, "joint": sorted(writer.joint)}


def _upper_labels(body: list[str], cast: Cast) -> bool:
    """Whether nearly all speaker cues (nine in ten, of five at least) are in capitals."""
    labels = [p for _, line, more in _cue_candidates(body)
              if (cue := _cue(line, cast, set(), START, more)) for p in cue.names]
    upper = sum(1 for p in labels if p.upper() == p)
    return len(labels) >= 5 and upper >= 0.9 * len(labels)


def _alone_confirmed(line: str, cast: Cast, known: set[str]) -> bool:
    """A label alone in its paragraph (its speech follows below the speaker's directions)
    when the text or the persons list confirms it."""
    label = line.strip().rstrip(".:")
    return 0 < len(label) <= 40 and (label.casefold() in known or cast.match(label) is not None)
