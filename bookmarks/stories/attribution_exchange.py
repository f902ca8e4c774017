"""Untagged exchanges solved as a whole: a run of speech paragraphs with no narration
between them is one conversation, and when it is a conversation of two its lines alternate.

The left-to-right rules (`attribution_turns.py`) give a bare line a speaker only when the two
people talking are already known at that point, and `fill_between` counts back between two
tagged lines. A run that opens untagged (`“What is his name?”` ¶ `“Bingley.”` ¶ … ¶ `“…,”
said Mr. Bennet.`), or whose second person is never tagged but called by name (`“…, Lizzy.”`),
is left to this pass, after the others:

- the run is the speech paragraphs around the bare lines (up to 12 each side), up to a
  paragraph of narration, a chapter break, a paragraph in which two people speak or the line
  of a third person;
- its two people are the speakers its tagged lines name, or, when they name one, that one and
  the one other person the lines call by name (or the narration just before names);
- every line whose speaker is known (a tag, or a call: a line that calls one of the two is
  the other's) must fall on the same alternation; a call of anyone else, a line given to the
  one it calls, or a third speaker near the run leaves the whole run as it was.

Bare lines (speech and nothing else) are given a speaker, and lines whose narration names no
one and whose only subject is `he` or `she` (`"…," she said.`, `"…" He laughed.`), which
must fit the count (and place it, where the two are a man and a woman); `how` = `exchange`.
"""

from __future__ import annotations

import re

from bookmarks.stories.attribution_turns import (
    _GROUP_CALL,
    _NEWCOMERS,
    _TIME_MOVES,
    _bare_speech,
    calls,
    name_only,
    to_someone,
)
from bookmarks.stories.tags import PERSON_NOUNS

REACH = 12  # speech paragraphs on either side of a block of bare lines that its count reads
NEAR = 3  # paragraphs around the run in which no one else may speak
_NEWCOMER = re.compile(r"\b(?:[Aa]n?|[Aa]nother|[Oo]ne)\s+(?:[a-z-]+\s+){0,2}?(?:"
                       + "|".join(sorted(PERSON_NOUNS, key=len, reverse=True)) + r")s?\b")
SCENE = 20  # paragraphs around the run in which its second person may be the one other talking


def solve_exchanges(paras, cast) -> None:
    k = 0
    while k < len(paras):
        if not (_bare_speech(paras[k]) and not any(paras[k].speakers)):
            k += 1
            continue
        start, block, end = _run(paras, k)
        _solve(paras, cast, start, end)
        k = block + 1


def _vague(cast, name: str) -> bool:
    """A character the text knows only by a bare description (`the man`, `the visitor`)."""
    person = cast.people.get(name)
    nouns = PERSON_NOUNS | {"visitor", "stranger"}
    return bool(person) and all(re.fullmatch(r"(?:[Tt]he\s+)?[A-Za-z-]+", f)
                                and f.split()[-1].casefold() in nouns for f in person.forms)


def _who(p) -> set[str]:
    return {s for s in p.speakers if s}


def _single(p) -> str | None:
    """The one speaker of a speech paragraph, or None (nobody, or two people)."""
    said = _who(p)
    return said.pop() if len(said) == 1 else None


def _in_run(p, chapter) -> bool:
    return bool(p.quotes) and p.chapter == chapter and len(_who(p)) <= 1 and any(q.speech for q in p.quotes)


def _run(paras, k: int) -> tuple[int, int, int]:
    """(start, end of k's block of bare lines, end): the block and up to REACH speech
    paragraphs on either side, not past a third person's line (a long talk is read in
    windows)."""
    chapter = paras[k].chapter
    start = end = k
    while end + 1 < len(paras) and _in_run(paras[end + 1], chapter) and not any(paras[end + 1].speakers) \
            and _bare_speech(paras[end + 1]):
        end += 1
    block = end
    said = set()
    for _ in range(REACH):
        if start > 0 and _in_run(paras[start - 1], chapter) and len(said | _who(paras[start - 1])) <= 2:
            start -= 1
            said |= _who(paras[start])
    for _ in range(REACH):
        if end + 1 < len(paras) and _in_run(paras[end + 1], chapter) \
                and len(said | _who(paras[end + 1])) <= 2:
            end += 1
            said |= _who(paras[end])
    return start, block, end


def _scene_start(paras, start: int, back: int) -> int:
    """Up to `back` paragraphs before `start`, not before narration that moves the story on
    in time (`Shortly after this I had to go out of town.`) or that brings in people the
    text does not name (`two strangers entered`): who talked before it is not in this scene."""
    first = max(0, start - back)
    for n in range(start - 1, first - 1, -1):
        if not paras[n].quotes and (_TIME_MOVES.search(paras[n].text) or _NEWCOMERS.search(paras[n].text)):
            return n + 1
    return first


def _solve(paras, cast, start: int, end: int) -> None:
    run = range(start, end + 1)
    known = {n: s for n in run if (s := _single(paras[n]))}
    called = {n: _calls(paras[n], cast) for n in run}
    pair = set(known.values())
    if len(pair) > 2:
        return
    if len(pair) < 2:
        pair |= set().union(*called.values())
    if len(pair) < 2 and start and not paras[start - 1].quotes \
            and paras[start - 1].chapter == paras[start].chapter:
        talked_of = {name for n in run for q in paras[n].quotes if q.speech
                     for _, _, name, _ in cast.mentions(q.text)} - set().union(*called.values())
        pair |= {name for _, _, name, _ in cast.mentions(paras[start - 1].text)} - (talked_of - pair)
        # (`I found Muriel Singer there … Corky, I took it, was out telephoning.` ¶ … `"You're
        # waiting for Corky, aren't you?"`: the one the lines talk of is not one of the two)
    if len(pair) == 1:  # the one other person who talks in this scene
        around = range(_scene_start(paras, start, SCENE), min(len(paras), end + 1 + SCENE))
        others = {s for n in around if paras[n].chapter == paras[start].chapter
                  for s in paras[n].speakers if s} - pair
        if len(others) == 1 and not _vague(cast, next(iter(others))):
            pair |= others  # (not `the man` who spoke at the desk a page before)
    if len(pair) != 2 or any(_GROUP_CALL.search(q.text) for n in run if not any(paras[n].speakers)
                             for q in paras[n].quotes if q.speech):
        return  # (`"Well, gentlemen, …"`: a bare line that speaks to both is a third's)
    a, b = sorted(pair)
    parity = set()  # (n % 2 == 0) -> a? True/False
    open_lines = {}
    for n in run:
        if n in known:
            parity.add((n % 2 == 0) == (known[n] == a))
        elif not any(paras[n].speakers):
            fits = _fits(paras[n], cast, pair)
            if fits is None:
                return  # `said the woman`, `Jane smiled.`: someone the count cannot place
            open_lines[n] = fits
            if len(fits) == 1:  # `"…," she said.` where one of the two is a woman
                parity.add((n % 2 == 0) == (fits == {a}))
        if called[n] - pair:
            return  # a third person is spoken to: they may be the one who answers
        for c in called[n]:
            speaker = b if c == a else a
            if n in known and known[n] != speaker:
                return  # a line calls its own speaker: the alternation is not this
            parity.add((n % 2 == 0) == (speaker == a))
    for n in run:  # `"Yes, papa."`, `"No, sir."`: with a man and a woman, the other one speaks
        if (listener := _addressed_sex(paras[n], cast, a, b)) is not None:
            speaker = b if listener == a else a
            if n in known and known[n] != speaker:
                return
            parity.add((n % 2 == 0) == (speaker == a))
    if len(parity) != 1:
        return
    even_is_a = parity.pop()
    near = range(_scene_start(paras, start, NEAR), min(len(paras), end + 1 + NEAR))
    if {s for n in near if paras[n].chapter == paras[start].chapter for s in paras[n].speakers
            if s} - pair:
        return  # someone else talks in this scene: a line of the run may be theirs
    if start and not paras[start - 1].quotes and _NEWCOMER.search(paras[start - 1].text):
        return  # `Along the quay a porter was lighting the lamps.`: someone new, who may speak
    if start and not paras[start - 1].quotes and to_someone(cast, paras[start - 1].text):
        return  # `Mr. Crowe spoke to the guard at the gate.`: the guard may answer
    if any((a if (n % 2 == 0) == even_is_a else b) not in fits for n, fits in open_lines.items()):
        return  # `"…," she said.` where the count gives the man
    for n in open_lines:
        p = paras[n]
        who = a if (n % 2 == 0) == even_is_a else b
        p.speakers = [who if q.speech else None for q in p.quotes]
        p.how = ["exchange" if q.speech else "" for q in p.quotes]


_ADDRESS = re.compile(r"(?:^|[,;:!?.—–-]\s*)(?:(?:my|oh|dear)\s+)*(sir|ma[’']am|madam|papa|pa|father|"
                      r"mamma|mama|mother)(?=\s*(?:[,;:!?.—–-]|$))", re.I)
_ADDRESS_SEX = {"sir": "m", "papa": "m", "pa": "m", "father": "m"}  # the rest: a woman


def _addressed_sex(p, cast, a: str, b: str) -> str | None:
    """Which of a man and a woman a line speaks to by `sir`, `ma'am`, `papa`, `mother` …:
    the one of that sex (None when the two are not a man and a woman, or the line says
    both or neither)."""
    ga, gb = cast.gender(a), cast.gender(b)
    if len(ga) != 1 or len(gb) != 1 or ga == gb or not ga | gb <= {"m", "f"}:
        return None
    said = {_ADDRESS_SEX.get(m.group(1).casefold().replace("’", "'"), "f")
            for q in p.quotes if q.speech for m in _ADDRESS.finditer(q.text)}
    if len(said) != 1:
        return None
    return a if said == ga else b


def _calls(p, cast) -> set[str]:
    """Whom a line calls by name; not a line that is only a name (`"Bingley."` answers
    `"What is his name?"`)."""
    text = " ".join(q.text for q in p.quotes if q.speech)
    return set() if name_only(text) else calls(cast, text)


def _fits(p, cast, pair: set[str]) -> set[str] | None:
    """Which of the two a line of the run may be: both for a bare line; the one of the sex
    its `he`/`she` tag or beat names; None when its narration names anyone or its tag is
    no pronoun (`said the woman`): the count says nothing of such a line."""
    if _bare_speech(p):
        return set(pair)
    narration = " ".join(p.seg(k) for k in range(len(p.segs)))
    if cast.mentions(narration) or not all(q.speech for q in p.quotes):
        return None
    tags = [t for t in [*p.after, *p.before] if t]
    subjects = {t.subject.casefold() for t in tags}
    subjects |= {m.group(1).casefold() for k in range(len(p.segs))
                 for m in _BEAT.finditer(p.seg(k).strip())}
    if not subjects or subjects - {"he", "she"} or len(subjects) > 1:
        return None
    g = "m" if subjects == {"he"} else "f"
    fits = {n for n in pair if g in cast.gender(n)}
    return fits or None


_BEAT = re.compile(r"(?:^|[.!?;:]\s+)(He|She)\b")  # a sentence about `he`/`she`


_WEAK = ("turn", "introduced", "alone", "beat-paragraph", "actor", "inherit", "between")


def check_turns(paras, cast) -> None:
    """A line that a counting rule gave (`turn`, `alone`, …) and that falls off the
    alternation the run's own speech tags set (two people, one count) is taken back: the
    count that gave it started wrong (`He nodded.` read as the other's answer) — not a line
    that calls the one the count would give it to (`"Nell, you know I was."`). Runs before
    `solve_exchanges`, which may then count it right."""
    k = 0
    while k < len(paras):
        j = k
        while j + 1 < len(paras) and _in_run(paras[k], paras[k].chapter) \
                and _in_run(paras[j + 1], paras[k].chapter):
            j += 1
        _check(paras, cast, range(k, j + 1))
        k = j + 1


def _by(p, rules) -> bool:
    return all(h.startswith(rules) for h, s in zip(p.how, p.speakers, strict=True) if s)


def _check(paras, cast, run: range) -> None:
    tagged = {n: s for n in run if (s := _single(paras[n])) and _by(paras[n], ("after:", "before:"))}
    pair = set(tagged.values())
    if len(pair) != 2:
        return
    a = min(pair)
    parity = {(n % 2 == 0) == (s == a) for n, s in tagged.items()}
    if len(parity) != 1:
        return
    even_is_a = parity.pop()
    for n in run:
        p = paras[n]
        if (s := _single(p)) in pair and n not in tagged and _by(p, _WEAK) \
                and (s == a) != ((n % 2 == 0) == even_is_a) and not _calls(p, cast) - {s}:
            p.speakers = [None] * len(p.quotes)
            p.how = [""] * len(p.quotes)


def check_next_tag(paras) -> None:
    """A line a counting rule gave to X (`turn`, …) right before a line whose own tag names
    X (`"Come, how will you trade?"` ¶ `"…," said Shelby.`) is taken back: the tag says the
    talk had not come round to X yet — the count went wrong, a third person spoke, or the
    last speaker went on. Runs last, after every rule that counts."""
    for n in range(len(paras) - 1):
        p, nxt = paras[n], paras[n + 1]
        if (s := _single(p)) is None or not _by(p, _WEAK) or nxt.chapter != p.chapter:
            continue
        first = next((k for k, q in enumerate(nxt.quotes) if q.speech), None)
        if first is not None and nxt.speakers[first] == s \
                and nxt.how[first].startswith(("after:", "before:")):
            p.speakers = [None] * len(p.quotes)
            p.how = [""] * len(p.quotes)


_BEAT_SEX = re.compile(r"\s*(?:(?P<m>He)|(?P<f>She))\s+(?!(?:said|asked|says|asks)\b)[a-z]+")


def check_beat_sex(paras, cast) -> None:
    """A line a counting rule gave to X, whose paragraph goes on right after it with `She
    stopped and put her hand to her forehead` and into more speech, while X is a man (or
    `He …` for a woman), is taken back: the beat says who spoke, and it is not X (a beat
    that ends the paragraph may be the other's answer, as `Resolver.backward` reads it).
    Runs after every rule that counts."""
    for p in paras:
        if (s := _single(p)) is None or not _by(p, (*_WEAK, "exchange")) or not (sex := cast.gender(s)):
            continue
        for i, q in enumerate(p.quotes[:-1]):
            if q.speech and p.speakers[i] == s and (m := _BEAT_SEX.match(p.seg(i + 1))) \
                    and sex == {"f" if m.group("m") else "m"}:
                p.speakers = [None] * len(p.quotes)
                p.how = [""] * len(p.quotes)
                break


def check_counts(paras, cast) -> None:
    """The last passes, after every rule that counts: a line the next line's tag or its own
    beat says is someone else's is taken back."""
    check_next_tag(paras)
    check_beat_sex(paras, cast)
