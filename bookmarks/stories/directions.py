"""Reading a stage direction: who enters, leaves, dies, hides, or speaks from off stage.

A direction is read sentence by sentence (`;` and `:` end one too). In each sentence the
verbs of coming and going are found in order, and each moves the people it is about:

- Latin forms name them after the verb: `Enter A and B`, `Enter A with B`, `Re-enter A`,
  `Exit A`, `Exeunt A and B`; `Exeunt` / `Exeunt omnes` / `Exeunt severally` (everyone),
  `Exeunt all but A` / `except A`, `Manet A` (everyone else leaves). A bare `Exit` is the
  actor's: the speaker of the speech it stands in, else the last speaker. `Exit` or
  `Exeunt` naming only people outside the cast (`Exit Servant`) moves no one.
- English verbs name them before: `A and B go out`, `A sweeps out`, `The music stops and A
  enters`, `A, who now enters`, `He bows, and goes out` (a pronoun is the person last
  named as subject, else the actor), `They all go off except A`; a verb with no subject
  (`Goes out, looking back.`) is the actor's.
- Exits: goes out / off / away / in, goes into a room (not into a corner; the closet is a
  hiding place), goes up/down the stairs, the garden, the street…, goes through the door,
  leaves (the room; not "leaves the door open", not "leaves Laertes"), any verb of motion
  with out / off / away (sweeps out, staggers out, runs off), departs, withdraws and retires
  into or to a room, off, out (alone they step aside: "Othello withdraws" stays to listen,
  "retires to the fireplace" stays), disappears, vanishes,
  is carried off. Entrances: enters, comes in / on / back / out of a room, returns, arrives,
  appears, runs in, hurries on, steps aboard, looks in, is discovered. "In and out" moves
  no one.
- Someone else moved: `takes the children into the room`, `leads him off`, `bearing off
  the body`, `ushers in A` / `shows A in` (the one who shows a visitor in goes out again).
- Deaths: dies, falls dead, is killed, expires. Hiding (hides, goes or rushes off behind the
  arras, into the closet, withdraws behind the screen) leaves the hider present: a hidden
  listener witnesses what is said.
- Appearances: someone `in the doorway`, `at the door`, who opens the door or `is seen`, is
  present only for a while (see presence.py); so is someone not on stage who is said to do
  something there (`BEN ambles aboard`), until they speak.
- Off stage: a speaker's direction `Within`, `Off`, `calls out from his room`, `from the
  other room` — that voice is not on stage.
Names are resolved through the cast and its aliases (see cast_names.py); a possessive
(`Helmer's study`) names no one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from bookmarks.stories.cast_names import Finder
from bookmarks.stories.stage_words import (  # noqa: F401 (the kinds and helpers are used from here)
    _APPOSITIVE,
    _BUT,
    _EVERYONE,
    _FROM_ROOM,
    _GROUP_GLUE,
    _LEAD,
    _LIST_GLUE,
    _NEW_SUBJECT,
    _OBJECT_BEFORE,
    _PLACE_HIDE,
    _PLACE_STAY,
    _PRONOUN,
    _ROOM,
    _SUBJECT_GAP,
    _SUBJECT_PRONOUNS,
    _USHER,
    _VERB_AFTER_NAME,
    _VERB_FIRST,
    _VERBS,
    _WITH_SUBJECT,
    ACT,
    APPEAR,
    DIE,
    ENTER,
    EXIT,
    HIDE,
    OFF,
    SHUT,
    Move,
    clean,
    moves_anyone,
    offstage_voice,
    sentences,
    split_speech,
)


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    names: frozenset[str] | None  # None: a pronoun or a group word, resolved in context
    word: str = ""


@lru_cache(maxsize=65536)
def verb_hits(sentence: str) -> tuple[tuple[str, int, int], ...]:
    """(kind, start, end) of each stage verb in a sentence, in order; where two readings
    overlap, the one `_VERBS` lists first. It depends on the words alone, not on the cast,
    so it is kept: deriving presence again after a merge or a line's correction (a novel of
    14,851 actions reads 24,834 sentences) finds the verbs once."""
    hits: list[tuple[str, int, int]] = []
    for kind, pattern in _VERBS:
        for m in pattern.finditer(sentence):
            if not any(a < m.end() and m.start() < b for _, a, b in hits):
                hits.append((kind, m.start(), m.end()))
    return tuple(sorted(hits, key=lambda h: h[1]))


class _Reader:
    def __init__(self, find: Finder, actor: str | None, stage: set[str], dead: set[str]):
        self.find = find
        self.actor = actor
        self.stage = set(stage)
        self.dead = dead
        self.last_subject: frozenset[str] | None = None
        self.moves: list[Move] = []
        self.touched: set[str] = set()  # moved in the sentence being read
        self.last_named: str | None = None  # who a `he` or `she` may be, failing a subject
        self.unnamed = False  # the last subject found was a pronoun or no word at all

    # -- people ------------------------------------------------------------------------
    def mentions(self, sentence: str) -> list[_Mention]:
        found = [_Mention(s, e, n) for s, e, n in self.find.groups_in(sentence)]
        taken = [(m.start, m.end) for m in found]
        for p in _PRONOUN.finditer(sentence):
            if not any(a < p.end() and p.start() < b for a, b in taken):
                found.append(_Mention(p.start(), p.end(), None, " ".join(p.group(1).lower().split())))
        return sorted(found, key=lambda m: m.start)

    def everyone(self) -> frozenset[str]:
        return frozenset(self.stage - self.dead)

    def resolve(self, group: list[_Mention], subject: bool) -> frozenset[str]:
        out: set[str] = set()
        for m in group:
            if m.names is not None:
                out |= m.names
            elif m.word in _EVERYONE:
                out |= (self.last_subject if m.word == "they" and self.last_subject
                        and len(self.last_subject) > 1 else self.everyone())
            elif m.word in ("he", "she", "himself", "herself"):
                out |= (self.last_subject if self.last_subject and len(self.last_subject) == 1
                        else {self.last_named} if self.last_named
                        else {self.actor} if self.actor else set())
            elif m.word in ("him", "her"):
                out |= {self.actor} if self.actor and not subject else set()
            elif m.word in ("them", "themselves"):
                out |= self.everyone() - (self.last_subject or frozenset())
        return frozenset(out)

    def group_back(self, mentions: list[_Mention], k: int, sentence: str) -> list[_Mention]:
        group = [mentions[k]]
        while k > 0 and mentions[k - 1].names is not None and mentions[k].names is not None \
                and _GROUP_GLUE.match(sentence[mentions[k - 1].end:mentions[k].start]):
            k -= 1
            group.insert(0, mentions[k])
        return group

    def group_forward(self, mentions: list[_Mention], k: int, sentence: str) -> list[_Mention]:
        group = [mentions[k]]
        while k + 1 < len(mentions) and mentions[k + 1].names is not None \
                and _GROUP_GLUE.match(sentence[mentions[k].end:mentions[k + 1].start]):
            k += 1
            group.append(mentions[k])
        return group

    def subject(self, sentence: str, mentions: list[_Mention], at: int) -> frozenset[str] | None:
        """Who does the verb at `at`: the names right before it (`A and B go out`, `A, who
        now enters`), else the sentence's subject, else the actor when the verb opens the
        sentence."""
        before = [i for i, m in enumerate(mentions) if m.end <= at]
        if before:
            k = before[-1]
            m = mentions[k]
            gap = sentence[m.end:at]
            relative = re.search(r"\bwho\b", gap, re.I)
            is_object = m.names is None and m.word not in _SUBJECT_PRONOUNS \
                or bool(_OBJECT_BEFORE.search(sentence[:m.start]))
            if _SUBJECT_GAP.match(gap) and (relative or not is_object):
                group = self.group_back(mentions, k, sentence)
                self.unnamed = all(g.names is None for g in group)
                return self.resolve(group, subject=True)
            first = mentions[0]
            if _LEAD.match(sentence[:first.start]) and (first.names is not None
                                                        or first.word in _SUBJECT_PRONOUNS) \
                    and not _NEW_SUBJECT.search(sentence[first.end:at]):
                group = self.group_forward(mentions, 0, sentence)
                self.unnamed = all(g.names is None for g in group)
                return self.resolve(group, subject=True)
            return None
        if _LEAD.match(sentence[:at]) or _VERB_FIRST.match(sentence):  # `Falls and dies.`
            self.unnamed = True
            return frozenset({self.actor}) if self.actor else None
        return None

    def listed(self, sentence: str, mentions: list[_Mention], at: int) -> tuple[frozenset[str], bool]:
        """The names listed after a Latin verb (`Enter A, B and C (R.H.)`), and whether
        anything is named there at all (a capitalised word outside the cast counts)."""
        out: set[str] = set()
        pos = at
        for m in mentions:
            if m.start < at or m.names is None and out:  # `with her notebook, and MAREN`
                continue
            gap = sentence[pos:m.start]
            if m.names is None or not (_LIST_GLUE.match(gap) or out and _APPOSITIVE.match(gap)):
                break
            if out and _VERB_AFTER_NAME.match(sentence[m.end:]):
                break
            out |= m.names
            pos = m.end
        rest = sentence[at:].strip(" ,.")
        named = bool(out) or bool(re.match(r"^(?:the\s+|two\s+|three\s+|a\s+)?[A-Z]", rest)) \
            and not re.match(r"^(?:omnes|all|severally|both)\b", rest, re.I)
        return frozenset(out), named

    # -- moves -------------------------------------------------------------------------
    def move(self, kind: str, names: Iterable[str]) -> None:
        names = frozenset(n for n in names if n)
        if not names:
            return
        self.moves.append(Move(kind, names))
        self.touched |= names
        if kind in (ENTER, APPEAR, HIDE, ACT):
            self.stage |= names
        elif kind in (EXIT, DIE, OFF):
            self.stage -= names

    def read(self, text: str, opening: bool) -> list[Move]:
        for _, sentence in sentences(clean(text)):
            mentions = self.sentence(sentence, opening)
            named = [m for m in mentions if m.names and len(m.names) == 1]
            if named and _LEAD.match(sentence[:named[0].start]):
                self.last_named = next(iter(named[0].names))
        return self.moves

    def sentence(self, sentence: str, opening: bool) -> list[_Mention]:
        """Read one sentence's moves; its mentions, found once (the names of a novel's cast
        are the slow part), for the caller too."""
        mentions = self.mentions(sentence)
        self.touched = set()
        for kind, start, end in verb_hits(sentence):
            self.verb(kind, sentence, mentions, start, end)
        moved = self.touched
        for m in mentions:
            if m.names and _FROM_ROOM.match(sentence[m.end:]):
                self.move(OFF, m.names)
                moved |= m.names
        first = mentions[0] if mentions else None
        subjects = self.group_forward(mentions, 0, sentence) \
            if first and first.names and _LEAD.match(sentence[:first.start]) \
            and not _OBJECT_BEFORE.search(sentence[:first.start]) else []
        for m in mentions:
            if not m.names or m.names & moved or m.names <= self.stage or m.names & self.dead:
                continue
            subject = m in subjects or subjects and _COMPANION.search(sentence[:m.start])
            if subject:  # the subject of what is done on stage (`ADA ambles aboard`, `Ada and
                # Ben sat at breakfast`), or one with them (`sat by the fire, with Ben`)
                self.move(ENTER if opening else ACT, m.names)
            elif opening:  # the first direction of a scene: whoever else is named is about,
                # for a while (for good once they speak), or only seen (`is seen a PORTER`)
                seen = _OBJECT_BEFORE.search(sentence[:m.start]) or re.search(
                    r"\bseen\s+(?:a|an|the)?\s*$", sentence[:m.start], re.I)
                self.move(APPEAR if seen else ACT, m.names)
        return mentions

    def verb(self, kind: str, sentence: str, mentions: list[_Mention], start: int, end: int
             ) -> frozenset[str] | None:
        after = sentence[end:]
        if kind.startswith("latin_"):
            names, named = self.listed(sentence, mentions, end)
            if kind == "latin_enter":
                self.move(ENTER, names)
                self.last_subject = names or self.last_subject
            elif kind == "latin_manet" or kind == "latin_exeunt" and _BUT.match(after.strip(" ,")):
                if kind == "latin_exeunt":
                    but = _BUT.search(after)
                    names, _ = self.listed(sentence, mentions, end + but.end())
                self.move(EXIT, self.everyone() - names)
            elif names:
                self.move(EXIT, names)
            elif not named:  # `Enter PEG with a tray, and exit.`: the one who came in
                subject = (self.subject(sentence, mentions, start) or self.last_subject
                           if kind == "latin_exit" else None)
                self.move(EXIT, subject if subject else self.everyone() if kind == "latin_exeunt"
                          else {self.actor} if self.actor else set())
            return names
        if kind in ("carry_in", "carry_out", "carry_obj"):
            return self.carry(kind, sentence, mentions, start, end)
        self.unnamed = False
        who = self.subject(sentence, mentions, start)
        if who is None or self.unnamed and _PAST.match(sentence[start:end]):
            return None  # a novel's `he went out`: the reader knows no one's sex to say who
        self.last_subject = who
        if kind == "go_into":
            place = re.match(r"\s*(?:the\s+|a\s+|an\s+|his\s+|her\s+|their\s+)?(?:[\w-]+\s+)?([\w-]+)",
                             after)
            words = after[:40]
            if re.search(rf"\b(?:{_PLACE_HIDE})\b", words, re.I):
                kind = "hide"
            elif place and re.match(rf"(?:{_PLACE_STAY})$", place.group(1), re.I) or \
                    re.match(rf"\s*(?:the\s+)?(?:{_PLACE_STAY})\b", after, re.I):
                return who
            else:
                kind = "exit"
        if kind == "exit" and re.match(r"\s*(?:behind|under|beneath|into\s+(?:the\s+)?(?:"
                                       + _PLACE_HIDE + r"))\b", after, re.I):
            kind = "hide"
        if kind == "leave" and sentence[start:end].lower().startswith("left"):
            kind = "exit"  # a novel's `had left him`, `left the room` (`leaves her` stays unsure)
        if kind == "leave":
            if not re.match(rf"\s*(?:$|[,.;]|the\s+(?:\w+\s+)?(?:{_ROOM}|stage|scene)\b|by\b|through\b|"
                            r"with\b|hurriedly|quickly|slowly|at\s+once|in\s+|\w+ly\b)", after, re.I):
                return who
            kind = "exit"
        if kind == "withdraw":
            if re.match(r"\s*(?:behind|into\s+(?:the\s+)?(?:" + _PLACE_HIDE + r")|under)\b", after, re.I):
                kind = "hide"
            elif re.match(rf"\s*(?:from\s+the\s+(?:room|stage|scene)|off\b|out\b|into\b|to\s+(?:his|her|"
                          rf"their|the)\s+(?:\w+\s+)?(?:{_ROOM}|bed)\b)", after, re.I):
                kind = "exit"
            else:
                return who
        if kind == "exit" and re.search(r"\b(?:but|except|save)\b", after, re.I) and \
                who == self.everyone():
            but = _BUT.search(after)
            keep, _ = self.listed(sentence, mentions, end + but.end())
            who = who - keep
        if kind == "shut":  # someone at the door who shuts it has gone (see presence.py)
            self.moves.append(Move(SHUT, who))
            self.touched |= who
            return None
        self.move({"enter": ENTER, "exit": EXIT, "die": DIE, "hide": HIDE, "appear": APPEAR}[kind],
                  who - self.dead if kind in ("enter", "appear", "hide") else who)
        if kind == "enter":  # `comes in with the children`
            with_ = re.match(r"\s*(?:[\w-]+\s+)?with\b", after, re.I)
            if with_:
                names, _ = self.listed(sentence, mentions, end + with_.end())
                self.move(ENTER, names)
        return who

    def carry(self, kind: str, sentence: str, mentions: list[_Mention], start: int, end: int
              ) -> frozenset[str] | None:
        verb = sentence[start:end].split()[0]
        if kind == "carry_obj":  # `takes the children into the room`, `shows A in`
            tail = re.match(r"\s+((?:[\w'’.-]+\s+){0,5}?)(in|into|off|out|away)\b(?!\s+and\s+out)"
                            r"(?!\s+(?:from|of)\s+(?:behind|under|the\s+(?:" + _PLACE_HIDE + r")))",
                            sentence[end:])
            if not tail:
                return None
            obj_end = end + tail.end(1)
            objects = [m for m in mentions if end <= m.start and m.end <= obj_end]
            direction = tail.group(2).lower()
            if not objects or direction == "in" and not re.match(rf"(?:{_USHER})$", verb, re.I):
                return None
        else:
            direction = sentence[start:end].split()[-1].lower()
            objects = [m for m in mentions if m.start >= end][:1]
            if objects:
                k = mentions.index(objects[0])
                gap = sentence[end:objects[0].start]
                if not _LIST_GLUE.match(gap) and not re.match(r"^\s*the\s+(?:body|corpse)\s+of\s+", gap):
                    return None
                objects = self.group_forward(mentions, k, sentence)
        names = self.resolve(objects, subject=False)
        if not names:
            return None
        doer = self.subject(sentence, mentions, start)
        if direction == "in":
            self.move(ENTER, names - self.dead)
            if re.match(r"(?:show|shows|showing|usher|ushers|ushering)$", verb, re.I) and doer:
                self.move(EXIT, doer - names)  # the one who shows a visitor in goes out again
        else:
            self.move(EXIT, names)
            if _WITH_SUBJECT.match(verb) and doer:
                self.move(EXIT, doer)
        return names


# someone with the sentence's subject, where they are: `sat by the fire, with Ben`, `walked
# with Ben`, `came in, followed by Ben`, `joined Ben`, `found Ben in the garden`
_COMPANION = re.compile(r"(?:,\s*with|\b(?:sat|sits|sitting|seated|stood|stands|standing|walked|walks|"
                        r"walking|was|were|remained|stayed|lingered|dined|breakfasted|together)\s+with|"
                        r"\b(?:followed|accompanied|joined)\s+by|\b(?:joined|joins|found|finds|met|meets))"
                        r"\s+(?:the\s+)?$", re.I)


# a verb in the past tense (a novel's narration, not a stage direction's present)
_PAST = re.compile(r"(?:\w+ed|went|ran|stole|crept|strode|flew|slunk|rode|drove|got|made|came|left|"
                   r"withdrew)\b", re.I)


def read(text: str, find: Finder, actor: str | None, stage: set[str], dead: set[str] = frozenset(),
         opening: bool = False) -> list[Move]:
    """The moves a direction makes, in order. `actor` does what no one is named for (the
    speaker of the speech the direction stands in, else the last speaker); `stage` is who
    is present before it; `opening`: the first direction of a scene, where whoever is named
    is on stage."""
    return _Reader(find, actor, stage, set(dead)).read(text, opening)
