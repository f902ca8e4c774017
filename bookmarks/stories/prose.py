"""Plain prose → actions: paragraphs become narration; quoted dialogue becomes the
speaker's action when the paragraph makes the speaker clear ("…," said Mara / Mara
asked, "…"). Chapter headings ("Chapter 3", "# Part Two") become chapter labels."""

from __future__ import annotations

import re
from typing import NamedTuple

from bookmarks.errors import StoryFormatError
from bookmarks.stories.story import NARRATION, Action

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


# --- Novels (used by the Project Gutenberg importer) --------------------------------------


class Draft(NamedTuple):
    """One action before validation: its file line, speaker (or narration), text, chapter."""

    line: int
    character: str
    text: str
    chapter: str | None


_NOVEL_QUOTE = re.compile(r"[\"“]([^\"“”]+)[\"”]|‘((?:[^‘’]|’(?=[A-Za-z]))+)’(?![A-Za-z])")
_NOVEL_VERBS = (
    _VERBS + r"|returned|observed|remarked|repeated|agreed|admitted|growled|grumbled|suggested|"
    r"protested|declared|announced|went on|put in|cried out|called out"
)
_TITLE_WORDS = frozenset(
    "mr mrs ms miss mister madame dr doctor st captain capt colonel major lady lord sir aunt "
    "uncle professor father mother sister brother".split()
)
_TITLE = "|".join(sorted((t.capitalize() for t in _TITLE_WORDS), key=len, reverse=True))
_PERSON = rf"(?:(?:{_TITLE})\.?\s)?[A-Z][a-z]+(?:[-'’][A-Z]?[a-z]+)?(?:\s[A-Z][a-z]+)?"
_WHO = rf"({_PERSON}|I|[Hh]e|[Ss]he)"
_VERB_WHO = rf"(?:{_NOVEL_VERBS})\s+(?:the\s+)?{_WHO}\b"
_WHO_VERB = rf"(?:\b[Tt]he\s+)?{_WHO}\s+(?:{_NOVEL_VERBS})\b"
_SAID_AFTER = re.compile(rf"^[\s,.!?;—–-]*(?:{_VERB_WHO}|{_WHO_VERB})")
_SAID_BEFORE = re.compile(rf"(?:{_WHO_VERB}|{_VERB_WHO})[\s,:—–-]*$")
_SAID_ANY = re.compile(rf"{_WHO_VERB}|{_VERB_WHO}")
_SUBJECT = re.compile(rf"(?:^|[.!?;]\s+)({_PERSON}|I)\b")
_MY_NAME = re.compile(rf"\b(?:[Mm]y name (?:is|was)|[Cc]all me|I am called|I was called|"
                      rf"(?:they|people|everyone) call(?:ed)? me)\s+({_PERSON})")
_SENTENCE_WORDS = frozenset(
    "The Then And But When While So Now Yet Still Suddenly Slowly At In On Presently Here There "
    "This That Only Even Just Perhaps Finally Again Once Soon Meanwhile Afterwards Later Outside "
    "Inside Behind Below Above Of For With Without Yes No Oh Well What Why How Who Where".split()
)
_NOT_FIRST = _SENTENCE_WORDS | _NOT_NAMES
_PRONOUNS = frozenset({"I", "he", "He", "she", "She"})


def _clean_person(raw: str | None) -> str | None:
    """`Then Nell` → `Nell`; None for pronouns-as-names and sentence words."""
    if not raw:
        return None
    words = raw.split()
    while words and words[0] in _NOT_FIRST:
        words = words[1:]
    return " ".join(words) or None


def _said(text: str, quotes: list[re.Match]) -> str | None:
    """The said-verb attribution of a paragraph: a name, a pronoun, or None."""
    spans = [(text[q.end():q.end() + 80], _SAID_AFTER.match) for q in quotes]
    spans.insert(1, (text[max(0, quotes[0].start() - 80):quotes[0].start()], _SAID_BEFORE.search))
    for part, find in spans:
        if m := find(part):
            who = next(g for g in m.groups() if g)
            return who if who in _PRONOUNS else _clean_person(who)
    return None


def _core(name: str) -> tuple[str | None, frozenset[str]]:
    words = name.replace(".", "").casefold().split()
    title = words[0] if len(words) > 1 and words[0] in _TITLE_WORDS else None
    return title, frozenset(words[1:] if title else words)


def merge_variants(names: list[str]) -> dict[str, str]:
    """Map each name to its fullest variant: `Slops` and `Captain Slops` → `Captain Slops`,
    `Anna` / `Miss Vell` → `Anna Vell`. A short form that fits two people stays apart."""
    order = sorted(set(names), key=lambda n: (-len(_core(n)[1]), _core(n)[0] is None, -len(n), n))
    canon: dict[str, str] = {}
    heads: list[str] = []
    for name in order:
        title, core = _core(name)
        fits = [h for h in heads if core <= _core(h)[1] and (title is None or _core(h)[0] in (None, title))]
        if len(fits) == 1:
            canon[name] = fits[0]
        else:
            heads.append(name)
            canon[name] = name
    return canon


def _bare_title(name: str) -> bool:
    return name.casefold().strip(".") in _TITLE_WORDS


def _mention_keys(canon: dict[str, str]) -> dict[str, str]:
    """Folded name, single name word or title (`Captain`) → canonical name, where only one
    character fits."""
    keys = {n.casefold(): head for n, head in canon.items()}
    owners: dict[str, set[str]] = {}
    for head in set(canon.values()):
        title, core = _core(head)
        for word in [*core, *([title] if title else [])]:
            owners.setdefault(word, set()).add(head)
    for word, heads in owners.items():
        if len(heads) == 1 and word not in keys:
            keys[word] = next(iter(heads))
    return keys


def _join_quotes(parts: list[str]) -> str:
    out = ""
    for part in (p.strip() for p in parts):
        if not out:
            out = part
        elif part[:1].islower():  # "I think," he said, "that we should go."
            out = f"{out} {part}"
        else:
            out = f"{out[:-1]}." if out.endswith(",") else out
            out = f"{out} {part}"
    return f"{out[:-1]}." if out.endswith(",") else out


def attribute_dialogue(
    paragraphs: list[tuple[int, str, str | None]],
) -> tuple[list[Draft], dict[str, list[str]]]:
    """Paragraphs (line, text, chapter) of a novel → drafts and {name: aliases}.

    A quoted paragraph's speaker is, in order: the name of a said-verb ("…," said Slops /
    Nell asked, "…"); the named first-person narrator for "I said" (a narrator is named by
    "my name is …" / "call me …"); the one known character who begins a sentence of the
    paragraph's narration; in a two-person exchange of unattributed lines, the one who spoke
    before last. Otherwise the paragraph stays narration. Name variants are merged.
    """
    quotes = [list(_NOVEL_QUOTE.finditer(text)) for _, text, _ in paragraphs]
    said = [_said(text, q) if q else None for (_, text, _), q in zip(paragraphs, quotes, strict=True)]
    narrator = _find_narrator(paragraphs, said)
    names = [w for w in said if w and w not in _PRONOUNS and not _bare_title(w)]
    names += [narrator] if narrator else []
    keys = _mention_keys(merge_variants(names))
    for _, text, _ in paragraphs:  # "Tom Harker held the candle" when "Harker" speaks
        for m in _SUBJECT.finditer(_NOVEL_QUOTE.sub(" ", text)):
            full = _clean_person(m.group(1)) or ""
            if len(full.split()) > 1 and full.split()[-1].casefold() in keys:
                names.append(full)
    canon = merge_variants(names)
    keys = _mention_keys(canon)
    drafts: list[Draft] = []
    used: dict[str, set[str]] = {}
    exchange: list[str] = []
    chapter_seen: str | None = None
    for (line, text, chapter), qs, who in zip(paragraphs, quotes, said, strict=True):
        if chapter != chapter_seen:
            exchange, chapter_seen = [], chapter
        if not qs:
            drafts.append(Draft(line, NARRATION, text, chapter))
            exchange = []
            continue
        outside = _NOVEL_QUOTE.sub(" ", text)
        surface: str | None = None
        if who and who not in _PRONOUNS:
            surface = who
        elif who == "I" or (who is None and _starts_with_i(outside)):
            surface = narrator
        if surface is None:
            surface = _subject(outside, keys)
        speaker = canon.get(surface or "") or keys.get((surface or "").casefold())
        if speaker is None and len(exchange) >= 2 and exchange[-1] != exchange[-2]:
            speaker = exchange[-2]
        if speaker is None:
            drafts.append(Draft(line, NARRATION, text, chapter))
            exchange = []
            continue
        exchange.append(speaker)
        if surface and surface != speaker and not _bare_title(surface):
            used.setdefault(speaker, set()).add(surface)
        spoken = Draft(line, speaker, _join_quotes([q.group(1) or q.group(2) for q in qs]), chapter)
        rest = re.sub(r"\s+", " ", _SAID_ANY.sub(" ", outside)).strip(" ,.;:—–-")
        if len(rest.split()) < 3:
            drafts.append(spoken)
        elif qs[0].start() == 0:
            drafts += [spoken, Draft(line, NARRATION, rest + ".", chapter)]
        else:
            drafts += [Draft(line, NARRATION, rest + ".", chapter), spoken]
    return drafts, {name: sorted(aliases) for name, aliases in used.items()}


def _starts_with_i(outside: str) -> bool:
    return bool(re.search(r"(?:^|[.!?]\s+)I\s+[a-z]", outside.strip()))


def _subject(outside: str, keys: dict[str, str]) -> str | None:
    """The single known character who begins a sentence of the narration, as written."""
    found: dict[str, str] = {}
    for m in _SUBJECT.finditer(outside.strip()):
        name = _clean_person(m.group(1))
        if not name or name == "I":
            continue
        for form in (name, name.split()[-1]):
            if form.casefold() in keys:
                found.setdefault(keys[form.casefold()], form)
                break
    return next(iter(found.values())) if len(found) == 1 else None


def _find_narrator(paragraphs: list[tuple[int, str, str | None]], said: list[str | None]
                   ) -> str | None:
    """The first-person narrator's name when the text gives it ("My name is Nell Carrow")."""
    for (_, text, _), who in zip(paragraphs, said, strict=True):
        searched = text if who == "I" else _NOVEL_QUOTE.sub(" ", text)
        if m := _MY_NAME.search(searched):
            return _clean_person(m.group(1))
    return None
