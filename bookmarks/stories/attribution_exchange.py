"""Untagged exchanges solved as a whole: a run of speech paragraphs with no narration
between them is one conversation, and when it is a conversation of two its lines alternate.

The left-to-right rules (`attribution_turns.py`) give a bare line a speaker only when the two
people talking are already known at that point, and `fill_between` counts back between two
tagged lines. A run that opens untagged (`“What is his name?”` ¶ `“Bingley.”` ¶ … ¶ `“…,”
said Mr. Bennet.`), or whose second person is never tagged but called by name (`“…, Lizzy.”`),
is left to this pass, after the others:

- the run is the speech paragraphs around the bare lines, up to a paragraph of narration, a
  chapter break or a paragraph in which two people speak;
- its two people are the speakers its tagged lines name, or, when they name one, that one and
  the one other person the lines call by name (or the narration just before names);
- every line whose speaker is known (a tag, or a call: a line that calls one of the two is
  the other's) must fall on the same alternation; a call of anyone else, a line given to the
  one it calls, or a third speaker near the run leaves the whole run as it was.

Only bare lines (speech and nothing else) are given a speaker, `how` = `exchange`.
"""

from __future__ import annotations

from bookmarks.stories.attribution_turns import SCENE_TALK, _bare_speech, calls

RUN_LIMIT = 30  # speech paragraphs in one run; a longer run is several scenes or a crowd


def solve_exchanges(paras, cast) -> None:
    k = 0
    while k < len(paras):
        if not (_bare_speech(paras[k]) and not any(paras[k].speakers)):
            k += 1
            continue
        start, end = _run(paras, k)
        _solve(paras, cast, start, end)
        k = end + 1


def _single(p) -> str | None:
    """The one speaker of a speech paragraph, or None (nobody, or two people)."""
    said = {s for s in p.speakers if s}
    return said.pop() if len(said) == 1 else None


def _in_run(p, chapter) -> bool:
    return bool(p.quotes) and p.chapter == chapter and len({s for s in p.speakers if s}) <= 1 \
        and any(q.speech for q in p.quotes)


def _run(paras, k: int) -> tuple[int, int]:
    chapter = paras[k].chapter
    start = end = k
    while start > 0 and _in_run(paras[start - 1], chapter) and end - start < RUN_LIMIT:
        start -= 1
    while end + 1 < len(paras) and _in_run(paras[end + 1], chapter) and end - start < RUN_LIMIT:
        end += 1
    return start, end


def _solve(paras, cast, start: int, end: int) -> None:
    run = range(start, end + 1)
    if end - start >= RUN_LIMIT:
        return
    known = {n: s for n in run if (s := _single(paras[n]))}
    called = {n: calls(cast, " ".join(q.text for q in paras[n].quotes if q.speech)) for n in run}
    pair = set(known.values())
    if len(pair) > 2:
        return
    if len(pair) < 2:
        others = set().union(*called.values()) - pair
        if len(others) != 1 and start and not paras[start - 1].quotes \
                and paras[start - 1].chapter == paras[start].chapter:
            others = {name for _, _, name, _ in cast.mentions(paras[start - 1].text)} - pair
        if len(pair) + len(others) != 2:
            return
        pair |= others
    a, b = sorted(pair)
    parity = set()  # (n % 2 == 0) -> a? True/False
    for n in run:
        if n in known:
            parity.add((n % 2 == 0) == (known[n] == a))
        if called[n] - pair:
            return  # a third person is spoken to: they may be the one who answers
        for c in called[n]:
            speaker = b if c == a else a
            if n in known and known[n] != speaker:
                return  # a line calls its own speaker: the alternation is not this
            parity.add((n % 2 == 0) == (speaker == a))
    if len(parity) != 1:
        return
    even_is_a = parity.pop()
    near = range(max(0, start - 6), min(len(paras), end + 1 + 6))
    if {s for n in near if paras[n].chapter == paras[start].chapter for s in paras[n].speakers
            if s} - pair:
        return  # someone else talks in this scene: a line of the run may be theirs
    for n in run:
        p = paras[n]
        if n in known or any(p.speakers) or not _bare_speech(p):
            continue
        who = a if (n % 2 == 0) == even_is_a else b
        p.speakers = [who] * len(p.quotes)
        p.how = ["exchange"] * len(p.quotes)
