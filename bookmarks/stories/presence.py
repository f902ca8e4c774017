"""Who could perceive each action of a storyline: the basis of "witnessed" knowledge.

Derived from the storyline itself, scene by scene (a new chapter — act or scene — starts
with an empty stage), as a reader would judge it:

- A stage emptied by a direction (`Exeunt.`) starts a new scene too, where someone named
  in the first direction is on stage (`FAUSTUS in his study.`).
- Every stage direction is read (directions.py): the narration lines, and the directions
  inside a speech (`[…]`, `(…)`, `_…_`), in the order they come. Entrances and exits by any
  common verb, groups (`Exeunt all but A`, `They all go off except A`), deaths, bodies
  carried off, hiding, names resolved through the cast, its aliases and short forms
  (`Exit POLONIUS` is Lord Polonius; a bare `Exit` is the speaker's, or the last speaker's).
- A direction's own action gives the stage *after* it: at `Exit A`, A is gone; at
  `Enter A`, A is there.
- A speech gives the stage while its words are spoken: everyone present during any of its
  words (a speaker who goes out at the end of their own speech heard it; someone who
  enters at its very end did not). Gutenberg plays split a speech at a direction that moves
  someone, so the words before and after it are actions of their own.
- A speaker is present when speaking (an entrance nobody wrote down) — unless the voice
  comes from off stage (`Within`, `calls out from his room`): then the speaker is not
  present, and stays off stage, speaking or not, until an entrance.
- The dead are not present from their death on (a body on stage perceives nothing); they
  are back only if they speak or enter again. Hidden listeners (behind the arras, in the
  closet) are present: they witness what is said.
- Someone only seen at a door, in a doorway, named in passing in a scene's first
  direction, or named as doing something while not on stage, is present for a while: for
  their own lines and the reply to them, then taken to have gone (or when they shut the
  door) unless they enter properly; someone said to do something on stage without an
  entrance written is present for a while too, and for good once they speak. So is an
  unnamed servant or messenger (`Servant`, `Maid`, `Messenger`), even one who enters:
  they come on an errand and, where the text gives them no exit, are taken to go once it
  is done.
- Where the text writes no exit, nobody leaves: a character stays present until an exit,
  a death or the end of the scene. A writer corrects such a range in the Library (see
  `set_range`); an import format that carries `present` per action wins outright (taken
  as it is: an empty list is an empty stage, a speaker not listed is not present).
- In a text that writes no entrances or exits at all, a character addressed by name
  (`Ada, look …`) counts as present too.
Presence is stored per story as ranges `(character, first, last)`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Sequence

from bookmarks.stories.cast_names import Finder
from bookmarks.stories.dialogue import NARRATOR  # the storyteller, or their alias (`Watson`)
from bookmarks.stories.directions import (
    ACT,
    APPEAR,
    DIE,
    ENTER,
    EXIT,
    HIDE,
    OFF,
    SHUT,
    Move,
    offstage_voice,
    read,
    split_speech,
)
from bookmarks.stories.story import NARRATION, Action, Character

Ranges = dict[str, list[tuple[int, int]]]

__all__ = ["PROSE", "Finder", "Ranges", "Reads", "Witness", "derive", "set_range", "split_speech",
           "to_ranges"]


# unnamed people who come on an errand (to announce, to bring, to fetch)
_ERRAND_ROLES = frozenset("servant servants maid maidservant manservant housemaid parlourmaid footman "
                          "butler page messenger attendant porter waiter waitress groom valet lackey "
                          "usher boy".split())


# a new scene in prose, where no one is written off: a section break (`* * *`, `#`, a rule of
# dashes) or a paragraph that opens on a jump in time (`The next morning…`, `Three days
# later…`); who is there is what the new scene shows. Not `Meanwhile` (most often the
# same scene: `Meanwhile Robert went on talking`), not minutes (`Two minutes later they
# were disturbed`), not a tale told in a speech (`"A week passed, and I…`)
_BREAK = re.compile(r"[\s*#~·•=_.\-—–]+")
_NUMBER = (r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|some|a\s+few|several|many"
           r"|\w+teen|twenty)")
_JUMP = re.compile(
    r"(?:(?:on|in|at|early|late|by)\s+)?(?:the\s+)?(?:next|following)\s+"
    r"(?:morning|day|evening|night|afternoon|week|month|year|spring|summer|autumn|winter)\b"
    rf"|{_NUMBER}\s+(?:hours?|days?|weeks?|months?|years?)\s+(?:later|afterwards?|passed|went\s+by"
    r"|had\s+passed|had\s+gone\s+by)\b"
    r"|that\s+(?:morning|afternoon|evening|night)\b(?!\s*[,;]?\s*(?:he|she|they|it|I|we)\s+(?:had|said))",
    re.IGNORECASE)
# `When Jane and Elizabeth were alone`, `Lanyon sat alone over his wine`, `no sooner was Mr.
# Utterson alone`: those named are all who are there
_ALONE = re.compile(r"(?:\b(?:was|were)\s+(?P<inv>[^.;:!?]{1,60}?)|(?P<who>[^.;:!?]{1,100}?)\b"
                    r"(?:was|were|sat|stood|remained|lay|found\s+(?:himself|herself|themselves)|left))"
                    r"\s+(?:quite\s+|all\s+)?alone\b")


def new_scene(text: str) -> bool:
    """A narration paragraph that starts a scene of its own in prose (see above)."""
    text = text.strip()
    return bool(_BREAK.fullmatch(text)) or bool(_JUMP.match(text.lstrip("_")))


_FIRST_PERSON = re.compile(r"\b(?:I|me|my|myself|[Ww]e|us|[Oo]ur)\b")


def _unquoted(text: str) -> str:
    """The narration of a paragraph, without what is said in it."""
    return re.sub(r"[“\"][^”\"]*[”\"]", " ", text)


def first_person(text: str) -> bool:
    """Narration told by its narrator about themself (`I walked`, `we sat`), not a quotation."""
    return bool(_FIRST_PERSON.search(_unquoted(text)))


def alone_with(text: str, find: Finder) -> set[str]:
    """The people a narration paragraph says are alone (see `_ALONE`); empty when it says
    no one is, or names no one of the cast there."""
    for m in _ALONE.finditer(_unquoted(text)):
        who = m.group("inv") or m.group("who")
        if re.search(r"\b(?:not|never|no\s+longer)\b|\b(?:if|as\s+if|though|wish(?:ed)?)\b", who, re.I):
            continue
        if names := {n for _, _, n in find.mentions(who)}:
            return names
    return set()


def _errand(name: str) -> bool:
    """An unnamed servant or messenger (`Servant`, `A Maid`, `First Messenger`)."""
    words = [w for w in re.split(r"[\s.]+", name.casefold()) if w and w not in
             ("a", "an", "the", "first", "second", "third", "another", "old", "young")]
    return bool(words) and all(w in _ERRAND_ROLES for w in words)


class _Stage:
    """Who is on stage, and how firmly."""

    def __init__(self) -> None:
        self.present: set[str] = set()
        self.weak: dict[str, int] = {}  # seen at a door or in passing: speeches since
        self.offstage: set[str] = set()  # voices heard from off stage, until they enter
        self.dead: set[str] = set()
        self.acting: set[str] = set()  # weak only until they speak

    def scene(self) -> None:
        self.present, self.weak, self.offstage, self.acting = set(), {}, set(), set()

    def apply(self, moves: Iterable[Move]) -> None:
        for move in moves:
            for name in move.names:
                self.one(move.kind, name)

    def one(self, kind: str, name: str) -> None:
        if kind in (ENTER, HIDE) or kind in (APPEAR, ACT) and name not in self.present:
            if kind in (APPEAR, ACT) or kind == ENTER and _errand(name):
                self.weak[name] = 0
                if kind == ACT and not _errand(name):
                    self.acting.add(name)
            else:
                self.weak.pop(name, None)
                self.acting.discard(name)
            self.present.add(name)
            self.offstage.discard(name)
            self.dead.discard(name)
        elif kind in (EXIT, DIE, OFF) or kind == SHUT and name in self.weak:
            self.present.discard(name)
            self.weak.pop(name, None)
            self.acting.discard(name)
            if kind == DIE:
                self.dead.add(name)
            if kind == OFF:
                self.offstage.add(name)

    def speech_by(self, speaker: str) -> None:
        """A new speech: those present only for a while go after the reply to their lines."""
        for name in list(self.weak):
            if name == speaker:
                self.weak[name] = 0
                continue
            self.weak[name] += 1
            if self.weak[name] >= 2:
                self.present.discard(name)
                self.acting.discard(name)
                del self.weak[name]


class Reads:
    """What reading each direction gave, kept between derivations of one story's presence:
    a writer's correction of one line derives the whole story again, and reading its
    narration was nearly all of that (about 6 s for a 15,000-action novel). A direction's
    moves depend only on its text, the cast, who does what no one is named for and who is on
    stage and dead before it: those are the key, and one `Reads` serves one cast only
    (`fitting` gives a new one for another), so that nothing read with another cast's names
    is ever used."""

    LIMIT = 200_000  # directions kept (a novel's narration is some tens of thousands)

    def __init__(self, cast: Sequence[Character] = ()) -> None:
        self.cast = self.signature(cast)
        self.moves: dict[tuple, tuple[Move, ...]] = {}
        self.hits = 0

    @staticmethod
    def signature(cast: Sequence[Character]) -> tuple:
        return tuple((c.name, tuple(c.keys())) for c in cast)

    def fitting(self, cast: Sequence[Character]) -> Reads:
        """This one if it was made for `cast` (and is not full), else a new one."""
        if self.signature(cast) == self.cast and len(self.moves) < self.LIMIT:
            return self
        return Reads(cast)

    def read(self, text: str, find: Finder, actor: str | None, stage: set[str], dead: set[str],
             opening: bool = False) -> list[Move]:
        key = (text, actor, frozenset(stage), frozenset(dead), opening)
        if (found := self.moves.get(key)) is not None:
            self.hits += 1
            return list(found)
        moves = read(text, find, actor, stage, dead, opening)
        self.moves[key] = tuple(moves)
        return moves


PROSE = frozenset({"prose", "gutenberg-novel"})  # the source formats read as prose
# The version of these rules. Bump it whenever `derive` gives any story another presence:
# a stored story derived under an older version is read again when the app or the CLI opens
# the store (`StoriesStore.refresh_presence`), so witnessed memory follows the better
# reading. tests/stories/test_presence_rules_version.py fails when the output changes but not this.
RULES = 3  # 2: a first-person narrator does not fade; 3: companions of the subject
FADE = 10  # prose: actions after which someone who neither spoke, acted nor was called is gone


def derive(actions: Iterable[Action], cast: Sequence[Character], reads: Reads | None = None,
           prose: bool = False) -> dict[int, set[str]]:
    """Who is present at each action (by index). `reads`: what reading the directions gave
    the last time this story's presence was derived, made for this cast (see `Reads`).
    `prose`: a novel's storyline, whose narration is no stage direction: a chapter's first
    paragraph names many who are not there, a section break or a jump in time starts a new
    scene (`new_scene`), and `… were alone` says who is there (`alone_with`)."""
    find = Finder(cast)
    if reads is not None and reads.cast != Reads.signature(cast):
        raise ValueError("these reads were made for another cast")
    reading = reads.read if reads is not None else read
    known = {c.name for c in cast}
    out: dict[int, set[str]] = {}
    stage = _Stage()
    chapter: object = object()
    last_speaker: str | None = None
    opening = True  # no one has spoken yet in this scene
    directed = False  # the text writes entrances and exits: trust them over vocatives
    seen: dict[str, int] = {}  # prose: the last action at which each one spoke, acted or was called
    teller = next((c.name for c in cast if c.name == NARRATOR or NARRATOR in c.aliases), None) \
        if prose else None  # a first-person narrator: there when the narration says `I`
    for at, a in enumerate(actions):
        if prose:  # a first-person narrator tells what they saw: they stay to the scene's end
            stage.present -= {n for n in stage.present if n != teller and at - seen.get(n, at) > FADE}
        if a.chapter != chapter:
            chapter, last_speaker, opening = a.chapter, None, not prose
            stage.scene()
        given = getattr(a, "present", None)
        if given is not None:  # taken as it is: nobody when empty, the speaker only if listed
            names = {find.by_key.get(n.casefold(), n) for n in given}  # aliases too
            stage.present = names & known
            stage.weak = {}
            out[a.index] = set(stage.present)
            continue
        if prose and a.character == NARRATION and new_scene(a.text):
            last_speaker = None
            stage.scene()
        if a.character == NARRATION:
            moves = reading(a.text, find, last_speaker, stage.present, stage.dead, opening)
            directed = directed or any(m.kind in (ENTER, EXIT, DIE) for m in moves)
            stage.apply(moves)
            seen.update((n, at) for m in moves for n in m.names)
            if teller and first_person(a.text):
                stage.present.add(teller)
                seen[teller] = at
            if prose and (alone := alone_with(a.text, find) & known):
                stage.scene()  # in prose: `When Jane and Elizabeth were alone`
                stage.present = alone
            out[a.index] = set(stage.present)
            if not stage.present and any(m.kind in (EXIT, DIE) for m in moves):
                opening = True  # the stage is empty: what follows is a new scene
            continue
        opening = False
        speaker = a.character if a.character in known else None
        if speaker:
            stage.speech_by(speaker)
            last_speaker = speaker
            seen[speaker] = at
        heard: set[str] = set()
        spoken = False
        lead: list[Move] = []  # the moves of the speaker's own directions before the words
        for is_direction, piece in split_speech(a.text):
            if is_direction:
                moves = reading(piece, find, speaker or last_speaker, stage.present, stage.dead)
                directed = directed or any(m.kind in (ENTER, EXIT, DIE) for m in moves)
                if speaker and not spoken and offstage_voice(piece):
                    moves.append(Move(OFF, frozenset({speaker})))
                lead += moves if not spoken else []
                stage.apply(moves)
                continue
            if speaker and not spoken:
                _speaker_on(stage, speaker, lead)
            heard |= stage.present
            spoken = True
        if not spoken:
            if speaker:
                _speaker_on(stage, speaker, lead)
            heard = set(stage.present)
        if (prose or not directed) and speaker:  # "Maren, forgive me" said alone on stage is no
            # entrance where the text writes them; a novel's `came in` is no such text
            addressed = {n for n in find.vocatives(a.text) if n != speaker}
            stage.present |= addressed
            heard |= addressed
            seen.update((n, at) for n in addressed)
        out[a.index] = heard
    return out


def _speaker_on(stage: _Stage, speaker: str, lead: list[Move]) -> None:
    """The speaker is present for their words: unless the voice is off stage (said so
    before the words, or since their last entrance); only for a while when all that is
    said is that they stand at the door."""
    said = {m.kind for m in lead if speaker in m.names}
    if OFF in said or speaker in stage.offstage and not said & {ENTER, HIDE}:
        stage.one(OFF, speaker)
    elif said & {ENTER, HIDE}:
        pass
    elif speaker in stage.acting and APPEAR not in said:
        stage.acting.discard(speaker)
        stage.weak.pop(speaker, None)
        stage.one(ENTER, speaker)
    elif APPEAR in said or speaker in stage.weak:
        stage.one(APPEAR, speaker)
        stage.weak[speaker] = 0
    else:
        stage.one(ENTER, speaker)


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


def corrections(given: dict[int, set[str]], derived: dict[int, set[str]]
                ) -> list[tuple[str, int, int, bool]]:
    """Where a presence that was given (a story's JSONL, which carries the writer's
    corrections) differs from what the storyline alone gives: (character, first, last,
    present) runs, in order, that `set_range` turns the derived presence into the given."""
    indices = set(given) | set(derived)
    added = to_ranges({i: given.get(i, set()) - derived.get(i, set()) for i in indices})
    dropped = to_ranges({i: derived.get(i, set()) - given.get(i, set()) for i in indices})
    return sorted([*((name, a, b, True) for name, runs in added.items() for a, b in runs),
                   *((name, a, b, False) for name, runs in dropped.items() for a, b in runs)],
                  key=lambda m: (m[1], m[0], m[3]))


def with_corrections(ranges: Ranges, marks: Iterable[tuple[str, int, int, bool]]) -> Ranges:
    """The derived `ranges` with a writer's corrections applied, in the order made."""
    out = {name: list(runs) for name, runs in ranges.items()}
    for name, first, last, present in marks:
        out[name] = set_range(out.get(name, []), first, last, present)
    return {name: runs for name, runs in out.items() if runs}


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
