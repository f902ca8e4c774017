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
"""

from __future__ import annotations

from bisect import bisect_right

from bookmarks.stories.attribution_chain import is_described
from bookmarks.stories.speakers import WIFE_TITLES


def _candidates(cast, speakers: set[str]) -> dict[str, set[str]]:
    """{one-word speaker: the speakers with a longer name it may stand for}."""
    out: dict[str, set[str]] = {}
    for short in speakers:
        if " " in short or is_described(cast, short):
            continue
        g = cast.gender(short)
        fits = {n for n in speakers if len(w := _words(n)) > 1 and short.casefold() in w
                and not is_described(cast, n) and not _husbands(n, short)
                and not (g and cast.gender(n) and not g & cast.gender(n))}
        if fits:
            out[short] = fits
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
    shared = _candidates(cast, speakers)
    if not shared:
        return
    short_of: dict[str, set[str]] = {}  # candidate → the short names it may be
    for short, fits in shared.items():
        for n in fits:
            short_of.setdefault(n, set()).add(short.casefold())
    given = [list(p.speakers) for p in paras]  # as the rules left them: a placed line is no evidence
    at: dict[str, list[int]] = {}  # candidate → the paragraphs that name them, in order
    for k, p in enumerate(paras):
        for n in _named_in(cast, p.text, short_of) | ({s for s in given[k] if s} & set(short_of)):
            at.setdefault(n, []).append(k)
    first, last = _chapters(paras)
    for pi, p in enumerate(paras):
        for i, s in enumerate(p.speakers):
            if s in shared and (who := _nearest(at, shared[s], pi, first[pi], last[pi])):
                p.speakers[i] = who
                if i < len(p.how):
                    p.how[i] = f"shared:{s}"


def _named_in(cast, text: str, short_of: dict[str, set[str]]) -> set[str]:
    """The candidates a paragraph names in full (`Mas'r George`, not `Mas'r`: a form without
    the short name is no sign of which one is meant)."""
    out = set()
    for start, end, n, _ in cast.mentions(text):
        if n in short_of and len(words := text[start:end].casefold().split()) > 1 \
                and short_of[n] & set(words):
            out.add(n)
    return out


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
