"""A one-word name that several speakers share, placed by the scene it is spoken in.

The import keeps a bare `George` apart from `George Harris` and `Mas'r George` because it
fits both (see `attribution_check.shared_names`). Read as one character, though, its lines
mix two people's: Eliza's husband in one chapter, the Shelbys' boy in the next. A reader
knows which George is meant from the scene: the one the chapter has just named in full
(`George Harris`, `Mas'r George`), in narration or in a line (`“…, Mas'r George”`).

So each line of a shared name goes to the one speaker it may stand for that the chapter
names nearest before it (or, when none is named before, nearest after it): a person of
the other sex (`Mrs. Nicholas` for `Nicholas`), a wife titled by her husband's name
(`Mrs. Alexander Bell` for `Alexander`) or a description (`Little girl`) is not a
candidate. Where the nearest paragraph names two of them, or the chapter names none, the
line stays with the short name. A placed line keeps the mark *a name several people share*
(`how` = `shared:NAME`), so a writer checks it first.

A title alone (`said the doctor`, `the sergeant`, `the professor`) is placed the same way,
among the speakers the text names with that title (`Dr. Lanyon`, and `Henry Jekyll`, whom
the narration calls `Dr. Jekyll`): the doctor of one chapter is Lanyon, of another Jekyll.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from bookmarks.stories.attribution_chain import is_described
from bookmarks.stories.speakers import WIFE_TITLES

# a description by a title (`said the doctor`) and the forms of that title before a name
_TITLES = {"doctor": ("dr", "doctor"), "captain": ("captain", "capt"), "colonel": ("colonel", "col"),
           "major": ("major",), "general": ("general", "gen"), "professor": ("professor", "prof"),
           "inspector": ("inspector",), "sergeant": ("sergeant", "sgt"), "lieutenant": ("lieutenant", "lt"),
           "judge": ("judge",), "bishop": ("bishop",), "squire": ("squire",), "count": ("count",),
           "countess": ("countess",), "baron": ("baron",), "baroness": ("baroness",), "duke": ("duke",),
           "duchess": ("duchess",), "prince": ("prince",), "princess": ("princess",)}


_TITLE_WORDS = frozenset(w for forms in _TITLES.values() for w in forms)
_ABBREVIATED = frozenset({"dr", "capt", "col", "gen", "prof", "sgt", "lt"})


def _candidates(cast, speakers: set[str], paras,
                others: dict[str, tuple[str, list[int]]]) -> dict[str, tuple[set[str], frozenset[str]]]:
    """{one-word speaker: (the people with a longer name it may stand for, the words of
    theirs that show it)}: `George` → `George Harris`, `Mas'r George` ({george}); the
    description `Doctor` → `Dr. Lanyon`, `Dr. Jekyll` ({dr, doctor}). For a title, someone
    who never speaks is one of them too (a doctor only named may be the one talking), but no
    line is given to them (`place_shared`); for a name, only speakers (a name's variants the
    import keeps apart, `Jos Sedley` beside `Mr. Joseph Sedley`, are one man)."""
    people = set(cast.people) | speakers
    out: dict[str, tuple[set[str], frozenset[str]]] = {}
    titled: dict[str, set[str]] | None = None  # read once, when a title speaks alone
    for short in speakers:
        if " " in short:
            continue
        title = short.casefold() in _TITLES  # `Doctor`, a title alone: no name of its own
        if not title and is_described(cast, short):
            continue
        words = frozenset(_TITLES[short.casefold()] if title else (short.casefold(),))
        if title and titled is None:
            titled = _titled(cast, people, paras)
            people |= set(others)  # `Dr. Lanyon`, who never speaks
            for n, (word, _) in others.items():
                titled.setdefault(n, set()).add(word)
        g = cast.gender(short)
        pool = people if title else speakers
        fits = {n for n in pool if n != short and (words & titled.get(n, set()) if title else
                                                   len(w := _words(n)) > 1 and words & set(w))
                and not is_described(cast, n) and not _husbands(n, short)
                and not (g and cast.gender(n) and not g & cast.gender(n))}
        if fits & speakers:
            out[short] = (fits, words)
    return out


def _titled(cast, people: set[str], paras) -> dict[str, set[str]]:
    """{person: the title words the text names them with} (`Dr. Lanyon`; `Henry Jekyll`,
    whom the narration calls `Dr. Jekyll`): their forms, then every mention, read once."""
    out: dict[str, set[str]] = {}
    for name in people:
        person = cast.people.get(name)
        for form in (person.forms if person else set()) | {name}:
            if len(w := _words(form)) > 1 and w[0] in _TITLE_WORDS:
                out.setdefault(name, set()).add(w[0])
    for p in paras:
        for start, _, n, _ in cast.mentions(p.text):
            if n in people and (word := _title_before(p.text[max(0, start - 14):start], _TITLE_WORDS)):
                out.setdefault(n, set()).add(word)
    return out


_TITLED_NAME = re.compile(r"\b(" + "|".join(sorted(_TITLE_WORDS, key=len, reverse=True))
                          + r")(\.?)\s+([A-Z][a-z][\w'’-]*)", re.IGNORECASE)


def _other_titled(cast, paras) -> dict[str, tuple[str, list[int]]]:
    """{`Dr. Lanyon`: (`dr`, the paragraphs)} for the titled names that are no one of the
    cast (who never speak): a doctor only named may be the one talking."""
    out: dict[str, tuple[str, list[int]]] = {}
    for k, p in enumerate(paras):
        for m in _TITLED_NAME.finditer(p.text):
            word = m.group(1).casefold()
            if m.group(2) and word not in _ABBREVIATED or not m.group(3)[:1].isupper() \
                    or cast.mentions(m.group(3)):
                continue
            name = f"{m.group(1)}{m.group(2)} {m.group(3)}"
            out.setdefault(name, (word, []))[1].append(k)
    return out


def _words(name: str) -> list[str]:
    return name.replace(".", "").casefold().split()


def _husbands(name: str, short: str) -> bool:
    """`Alexander` and `Bell` beside `Mrs. Alexander Bell` are her husband's names, not hers
    (as the cast reads them, `Cast._keys`)."""
    words = _words(name)
    return words[0] in WIFE_TITLES and short.casefold() in words[1:]


def place_shared(paras, cast) -> None:
    """Give each line of a shared one-word name to the speaker its scene names (in place)."""
    speakers = {s for p in paras for s in p.speakers if s}
    titles = any(s.casefold() in _TITLES for s in speakers)
    others = _other_titled(cast, paras) if titles else {}
    shared = _candidates(cast, speakers, paras, others)
    if not shared:
        return
    short_of: dict[str, set[str]] = {}  # candidate → the words that name them in full
    for fits, words in shared.values():
        for n in fits:
            short_of.setdefault(n, set()).update(words)
    given = [list(p.speakers) for p in paras]  # as the rules left them: a placed line is no evidence
    at: dict[str, list[int]] = {}  # candidate → the paragraphs that name them, in order
    for k, p in enumerate(paras):
        for n in _named_in(cast, p.text, short_of) | ({s for s in given[k] if s} & set(short_of)):
            at.setdefault(n, []).append(k)
    for n, (_, where) in others.items():
        at[n] = sorted(set(at.get(n, [])) | set(where))
    first, last = _chapters(paras)
    for pi, p in enumerate(paras):
        for i, s in enumerate(p.speakers):
            if s in shared and (who := _nearest(at, shared[s][0], pi, first[pi], last[pi])) in speakers:
                p.speakers[i] = who
                if i < len(p.how):
                    p.how[i] = f"shared:{s}"


def _named_in(cast, text: str, short_of: dict[str, set[str]]) -> set[str]:
    """The candidates a paragraph names in full (`Mas'r George`, not `Mas'r`: a form without
    the short name is no sign of which one is meant; `Dr. Jekyll` for the doctor)."""
    out = set()
    for start, end, n, _ in cast.mentions(text):
        if n not in short_of:
            continue
        words = _words(text[start:end])
        if len(words) > 1 and short_of[n] & set(words) or _title_before(text[max(0, start - 14):start],
                                                                      short_of[n]):
            out.add(n)
    return out


def _title_before(text: str, titles: set[str] | frozenset[str]) -> str:
    """The title (`dr`, `doctor`) right before a name, one of `titles`, else "" (not `said
    the Doctor. `, a sentence's end)."""
    m = re.search(r"\b([A-Za-z]+)(\.?)\s+$", text)
    word = m.group(1).casefold() if m else ""
    ok = word in titles and word in _TITLE_WORDS and (not m.group(2) or word in _ABBREVIATED)
    return word if ok else ""


def _chapters(paras) -> tuple[list[int], list[int]]:
    """Each paragraph's chapter's first and last paragraph."""
    first, last = [0] * len(paras), [0] * len(paras)
    k = 0
    while k < len(paras):
        end = k
        while end + 1 < len(paras) and paras[end + 1].chapter == paras[k].chapter:
            end += 1
        first[k:end + 1], last[k:end + 1] = [k] * (end + 1 - k), [end] * (end + 1 - k)
        k = end + 1
    return first, last


def _nearest(at: dict[str, list[int]], fits: set[str], pi: int, lo: int, hi: int) -> str | None:
    """The one candidate named nearest before paragraph pi in its chapter (lo..hi), else
    nearest after it; None when that paragraph names two, or the chapter none."""
    before: dict[str, int] = {}
    after: dict[str, int] = {}
    for n in fits:
        ks = at.get(n, [])
        j = bisect_right(ks, pi)  # ks[:j] are at or before pi
        if j and ks[j - 1] >= lo:
            before[n] = ks[j - 1]
        if j < len(ks) and ks[j] <= hi:
            after[n] = ks[j]
    if before:
        found = [n for n, k in before.items() if k == max(before.values())]
    else:
        found = [n for n, k in after.items() if k == min(after.values())]
    return found[0] if len(found) == 1 else None
