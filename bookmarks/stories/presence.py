"""Who could perceive each action of a storyline: the basis of "witnessed" knowledge.

Derived from the storyline itself, chapter by chapter (a new chapter or scene starts with
an empty stage):
- stage directions: `Enter A and B`, `Re-enter A`, `Exit A`, `Exit` (the last speaker),
  `Exeunt A and B`, `Exeunt` / `Exeunt all`, `Exeunt all but A`;
- narration naming a character as arriving or leaving (`Ada comes in`, `Ben leaves`);
- a speaker is present when speaking (an entrance nobody wrote down), and, in texts that
  write no entrances or exits, so is a character addressed by name (`Ada, look …`);
- an action's own `present` list, where an import format carries one, wins.
A character perceives their own entrance and exit. Presence is stored per story as
ranges `(character, first, last)`; a writer can correct it over a range.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence

from bookmarks.stories.story import NARRATION, Action, Character

_ENTER = re.compile(r"\b(?:re-?)?enters?\b|\bcomes? (?:in|back)\b|\barrives?\b|\breturns?\b",
                    re.IGNORECASE)
_EXIT = re.compile(r"\bexit\b|\bexits\b|\bexeunt\b|\bleaves?\b|\bgoes? (?:out|off)\b|"
                   r"\bdeparts?\b", re.IGNORECASE)
_ALL_BUT = re.compile(r"\bexeunt\b[^.;]*?\ball but\b", re.IGNORECASE)
_ALL = re.compile(r"\bexeunt(?: omnes| all)?\s*[.\]]?\s*$|\bexeunt (?:omnes|all)\b(?! but)",
                  re.IGNORECASE)
_CLAUSE = re.compile(r"[.;]\s+|\]\s*")

Ranges = dict[str, list[tuple[int, int]]]


class Finder:
    """Whole-word, case-insensitive name matching against the cast (longest name first)."""

    def __init__(self, cast: Sequence[Character]):
        keys = sorted({(k, c.name) for c in cast for k in c.keys() if k.strip()},
                      key=lambda kv: -len(kv[0]))
        self.by_key = {k.casefold(): name for k, name in keys}
        self.pattern = re.compile(
            r"(?<![\w'])(" + "|".join(re.escape(k) for k, _ in keys) + r")(?![\w'])",
            re.IGNORECASE) if keys else None

    def vocatives(self, text: str) -> set[str]:
        """Names used to address someone: "Nell, …", "…, Nell." (not names talked about)."""
        if self.pattern is None:
            return set()
        out = set()
        for m in self.pattern.finditer(text):
            before, after = text[:m.start()].rstrip(), text[m.end():m.end() + 1]
            if (not before or before.endswith((",", "—", "!", "?", "."))) and after in (",", "!") \
                    or before.endswith(",") and after in (".", "!", "?", ","):
                out.add(self.by_key[m.group(1).casefold()])
        return out

    def names(self, text: str) -> list[str]:
        if self.pattern is None:
            return []
        out: list[str] = []
        for m in self.pattern.finditer(text):
            name = self.by_key[m.group(1).casefold()]
            if name not in out:
                out.append(name)
        return out


def _direction(text: str, present: set[str], find: Finder, last_speaker: str | None
               ) -> tuple[set[str], set[str]]:
    """(entering, leaving) for one narration line, clause by clause."""
    entering: set[str] = set()
    leaving: set[str] = set()
    for clause in filter(None, (c.strip(" [].") for c in _CLAUSE.split(text))):
        named = find.names(clause)
        if _ALL_BUT.search(clause):
            keep = set(find.names(clause[_ALL_BUT.search(clause).end():]))
            leaving |= (present | entering) - keep
        elif _ALL.search(clause) and not named:
            leaving |= present | entering
        elif m := _EXIT.search(clause):
            who = [n for n in find.names(clause[m.start():])] or named
            if who:
                leaving |= set(who)
            elif last_speaker:
                leaving.add(last_speaker)
        elif _ENTER.search(clause):
            entering |= set(named)
    return entering, leaving


def derive(actions: Iterable[Action], cast: Sequence[Character]) -> dict[int, set[str]]:
    """Who is present at each action (by index)."""
    find = Finder(cast)
    known = {c.name for c in cast}
    out: dict[int, set[str]] = {}
    present: set[str] = set()
    chapter: object = object()
    last_speaker: str | None = None
    directed = False  # the text writes entrances and exits: trust them over vocatives
    for a in actions:
        if a.chapter != chapter:
            chapter, present, last_speaker = a.chapter, set(), None
        given = getattr(a, "present", None)
        if given:
            names = {find.by_key.get(n.casefold(), n) for n in given}  # aliases too
            present = (names & known) | ({a.character} & known)
            out[a.index] = set(present)
            continue
        if a.character == NARRATION:
            entering, leaving = _direction(a.text, present, find, last_speaker)
            directed = directed or bool(entering or leaving)
            here = present | entering
            out[a.index] = set(here | leaving)  # one sees oneself enter and leave
            present = here - leaving
            continue
        if a.character in known:
            present.add(a.character)
            last_speaker = a.character
        if not directed:  # "Maren, forgive me" said alone on stage is no entrance
            present |= {n for n in find.vocatives(a.text) if n != a.character}
        out[a.index] = set(present)
    return out


def to_ranges(per_action: dict[int, set[str]]) -> Ranges:
    """Per character, the runs of consecutive actions it was present for."""
    ranges: Ranges = {}
    for idx in sorted(per_action):
        for name in per_action[idx]:
            runs = ranges.setdefault(name, [])
            if runs and runs[-1][1] == idx - 1:
                runs[-1] = (runs[-1][0], idx)
            else:
                runs.append((idx, idx))
    return ranges


def set_range(runs: list[tuple[int, int]], first: int, last: int, present: bool
              ) -> list[tuple[int, int]]:
    """`runs` with first..last marked present or absent (merged, in order)."""
    cells: list[tuple[int, int]] = []
    for a, b in runs:
        if b < first or a > last:
            cells.append((a, b))
            continue
        if a < first:
            cells.append((a, first - 1))
        if b > last:
            cells.append((last + 1, b))
    if present:
        cells.append((first, last))
    cells.sort()
    merged: list[tuple[int, int]] = []
    for a, b in cells:
        if merged and a <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


class Witness:
    """Whether a character could perceive a line of a lineage: trunk actions by the
    story's presence ranges; a scene's own lines (after `trunk_end`) if the character is
    in the scene's cast."""

    def __init__(self, character: str, runs: list[tuple[int, int]], trunk_end: int,
                 scene_cast: Sequence[str] = ()):
        self.character = character
        self.starts = [a for a, _ in runs]
        self.runs = runs
        self.trunk_end = trunk_end
        self.in_scene = character in scene_cast

    def sees(self, index: int) -> bool:
        if index > self.trunk_end:
            return self.in_scene
        k = bisect_right(self.starts, index) - 1
        return k >= 0 and self.runs[k][0] <= index <= self.runs[k][1]

    def filter(self, lines):
        return [ln for ln in lines if self.sees(ln.index)]

    def unseen(self, lo: int, hi: int) -> int:
        """How many trunk actions lo..hi were out of this character's sight."""
        hi = min(hi, self.trunk_end)
        if hi < lo:
            return 0
        seen = sum(max(0, min(b, hi) - max(a, lo) + 1) for a, b in self.runs)
        return (hi - lo + 1) - seen
