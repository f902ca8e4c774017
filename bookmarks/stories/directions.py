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
  appears, runs in, looks in, is discovered. "In and out" moves no one.
- Someone else moved: `takes the children into the room`, `leads him off`, `bearing off
  the body`, `ushers in A` / `shows A in` (the one who shows a visitor in goes out again).
- Deaths: dies, falls dead, is killed, expires. Hiding (hides, goes or rushes off behind the
  arras, into the closet, withdraws behind the screen) leaves the hider present: a hidden
  listener witnesses what is said.
- Appearances: someone `in the doorway`, `at the door`, or who `is seen`, is present only
  for a while (see presence.py).
- Off stage: a speaker's direction `Within`, `Off`, `calls out from his room`, `from the
  other room` — that voice is not on stage.
Names are resolved through the cast and its aliases (see cast_names.py); a possessive
(`Helmer's study`) names no one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bookmarks.stories.cast_names import Finder

ENTER, EXIT, DIE, HIDE, APPEAR, OFF, SHUT = "enter", "exit", "die", "hide", "appear", "off", "shut"


@dataclass(frozen=True)
class Move:
    kind: str
    names: frozenset[str]


@dataclass
class _Mention:
    start: int
    end: int
    names: frozenset[str] | None  # None: a pronoun or a group word, resolved in context
    word: str = ""


def _forms(*stems: str) -> str:
    """`go` → go|goes|going|went… from "go:goes:going" style stems."""
    return "|".join(f for s in stems for f in s.split(":"))


_MOTION = _forms("go:goes:going", "run:runs:running", "rush:rushes:rushing",
                 "hurry:hurries:hurrying", "walk:walks:walking", "sweep:sweeps:sweeping",
                 "storm:storms:storming", "stalk:stalks:stalking", "steal:steals:stealing",
                 "slip:slips:slipping", "stagger:staggers:staggering", "dash:dashes:dashing",
                 "march:marches:marching", "creep:creeps:creeping", "stride:strides:striding",
                 "limp:limps:limping", "flounce:flounces:flouncing", "dart:darts:darting",
                 "stumble:stumbles:stumbling", "totter:totters:tottering",
                 "bustle:bustles:bustling", "glide:glides:gliding", "fly:flies:flying",
                 "hasten:hastens:hastening", "move:moves:moving", "trot:trots:trotting",
                 "skip:skips:skipping", "race:races:racing", "back:backs:backing",
                 "bolt:bolts:bolting", "saunter:saunters:sauntering", "stroll:strolls:strolling",
                 "wander:wanders:wandering", "slink:slinks:slinking", "sneak:sneaks:sneaking",
                 "tiptoe:tiptoes:tiptoeing", "crawl:crawls:crawling", "scramble:scrambles",
                 "scamper:scampers:scampering", "troop:troops:trooping", "reel:reels:reeling",
                 "lurch:lurches:lurching", "shuffle:shuffles:shuffling", "trudge:trudges",
                 "plod:plods", "ride:rides:riding", "drive:drives:driving", "file:files:filing",
                 "pass:passes:passing", "step:steps:stepping", "burst:bursts:bursting",
                 "get:gets:getting", "make:makes:making")
_GO = "go|goes|going"
_CARRY = _forms("take:takes:taking", "lead:leads:leading", "get:gets:getting",
                "carry:carries:carrying", "bear:bears:bearing", "drag:drags:dragging",
                "hurry:hurries:hurrying", "push:pushes:pushing", "send:sends:sending",
                "escort:escorts:escorting", "conduct:conducts:conducting", "draw:draws:drawing",
                "pull:pulls:pulling", "help:helps:helping", "hustle:hustles:hustling")
_USHER = _forms("show:shows:showing", "usher:ushers:ushering", "admit:admits:admitting",
                "bring:brings:bringing", "lead:leads:leading", "let:lets:letting")
_WITH_SUBJECT = re.compile(r"^(?:lead|leads|leading|escort|escorts|escorting|conduct|conducts|"
                           r"conducting|hurry|hurries|hurrying|hustle|hustles|hustling)$", re.I)
_PLACE_HIDE = r"closet|cupboard|wardrobe|press"
_PLACE_STAY = (r"corner|centre|center|middle|window|recess|alcove|light|shadow|shade|background|"
               r"foreground|arbour|arbor|bay|crowd|chair|arms|embrace|room\s+(?:on|at)\s+\w+\s+side")
_ROOM = (r"room|hall|house|study|garden|library|kitchen|chamber|bedroom|office|parlour|parlor|"
         r"passage|corridor|street|conservatory|apartment|cottage|church|inn|tavern|shop|"
         r"palace|castle|tent|cabin|yard|lobby|vestibule|ante-?room|drawing-room|dining-room|"
         r"music-room|smoking-room|morning-room|dressing-room|wings|house")
_VERBS: list[tuple[str, re.Pattern]] = [(kind, re.compile(p, re.I)) for kind, p in [
    ("latin_enter", r"\b(?:re-?enter|enter)\b(?!s|ing|ed)"),
    ("latin_exit", r"\bexit\b(?!s|ing)"),
    ("latin_exeunt", r"\bexeunt\b"),
    ("latin_manet", r"\bman(?:et|ent)\b"),
    ("carry_in", rf"\b(?:{_USHER})\s+in\b(?!\s+and\s+out)"),
    ("carry_out", rf"\b(?:{_CARRY})\s+(?:off|out|away)\b"
                  rf"(?!\s+(?:from|of)\s+(?:behind|under|the\s+(?:{_PLACE_HIDE})))"),
    ("carry_obj", rf"\b(?:{_CARRY}|{_USHER})\b(?=\s)"),
    ("enter", r"\b(?:re-?enters|enters|entering|re-?entering)\b"),
    ("enter", r"\b(?:comes?|coming)\s+(?:in|on|back|out\s+(?:of|from))\b(?!\s+and\s+out)"),
    ("enter", r"\b(?:returns?|returning|reappears?|reappearing|arrives?|arriving|appears?|"
              r"appearing)\b"),
    ("enter", rf"\b(?:{_MOTION})\s+in\b(?!\s+and\s+out|\s+(?:a|an|the|his|her|their)\b)"),
    ("enter", r"\b(?:looks?|looking|peeps?|peeping)\s+(?:in(?=\s*(?:[.,;]|$|and\b))|into\s+the\s+room)"),
    ("enter", r"\b(?:is|are)\s+discovered\b|\bdiscovered\b"),
    ("appear", r"\b(?:is|are)\s+seen\b"),
    ("appear", r"(?<!knocks )(?<!knock )(?<!knocking )\b(?:in|at)\s+the\s+(?:open\s+|half-open\s+|"
               r"\w+\s+)?(?:doorway|door)\b"),
    ("die", r"\b(?:dies|die)\b|\b(?:falls?|drops?)\s+dead\b|\b(?:is|are)\s+(?:killed|slain)\b|"
            r"\bexpires\b|\bbreathes\s+(?:his|her)\s+last\b"),
    ("hide", r"\bhides?\b|\bhiding\b|\bconceals?\s+(?:himself|herself|themselves)\b"),
    ("exit", r"\bexits\b|\b(?:departs?|departing|disappears?|disappearing|vanish(?:es)?|vanishing)\b"),
    ("enter", rf"\b(?:{_MOTION}|peeps?|peeping|looks?|looking|comes?|coming)\s+(?:out|forth|forward)\s+"
              rf"(?:of|from)\s+(?:behind|under|beneath|his|her|their|the\s+(?:{_PLACE_HIDE}))\b"),
    ("exit", rf"\b(?:{_MOTION})\s+(?:out|off|away)\b"),
    ("exit", rf"\b(?:{_GO})\s+in\b(?=\s*(?:[.,;]|$|and\b|to\b|again\b))"),
    ("exit", rf"\b(?:{_GO})(?=\s*(?:[.,;]|$))"),
    ("go_into", rf"\b(?:{_MOTION})\s+(?:back\s+)?into\b"),
    ("exit", rf"\b(?:{_MOTION})\s+(?:up|down)(?:stairs\b|\s+the\s+(?:\w+\s+)?(?:stairs|steps|"
             rf"staircase|garden|street|road|path|lane|avenue|hill|walk|passage|corridor)\b)"),
    ("exit", rf"\b(?:{_MOTION})\s+(?:out\s+)?through\s+the\s+(?:\w+\s+)?(?:door|doors|doorway|gate|"
             rf"window|hall|arch|archway|curtains?|garden|{_ROOM})\b"),
    ("leave", r"\b(?:leaves|leave|leaving)\b"),
    ("withdraw", r"\b(?:withdraws?|withdrawing|retires?|retiring)\b"),
    ("exit", r"\b(?:is|are)\s+(?:carried|borne|dragged|led|taken|hurried|hustled)\s+(?:off|out|away)\b"),
    ("shut", r"\b(?:shuts?|closes?)\s+the\s+(?:\w+\s+)?door\b"),
]]

_STAGE_POSITION = r"(?:\(?\b(?:[LRCUD]\.\s?)(?:[HCEU]\.\s?)*\)?|\([^()]{0,24}\))"
_LIST_GLUE = re.compile(rf"^(?:[\s,&]|\band\b|\bwith\b|\bfollowed\s+by\b|\bthe\b|\ball\b|\bboth\b|"
                        rf"{_STAGE_POSITION})*$", re.I)
_GROUP_GLUE = re.compile(r"^(?:[\s,&]|\band\b)*$", re.I)
_SUBJECT_GAP = re.compile(r"^(?:[\s,]|\bwho\b|\bthen\b|\balso\b|\ball\b|\bboth\b|\bnow\b|\bagain\b|"
                          r"\bat\s+once\b|\bthereupon\b|\bfinally\b|\bslowly\b|\bquickly\b|\bsoon\b|"
                          r"\bpresently\b|\b\w+ly\b|\bcan\b|\bmust\b|\bwill\b|\bsuddenly\b)*$", re.I)
_LEAD = re.compile(r"^(?:[\s,\[\(]|\bthe\b|\bthen\b|\band\b|\bbut\b|\bmeanwhile\b|\bnow\b|\bhere\b|"
                   r"\bat\s+(?:last|once|length)\b|\bsuddenly\b|\bpresently\b|\bfinally\b|\bsoon\b|"
                   r"\bagain\b|\b\w+ly\b|\bafter\s+a\s+(?:moment|pause|while)\b|\ba\s+little\s+later\b)*$",
                   re.I)
_OBJECT_BEFORE = re.compile(r"\b(?:to|at|with|from|of|behind|by|for|on|upon|towards?|after|into|"
                            r"before|beside|near|round|around|about|over|under|between|among|than|"
                            r"like|past|through|across|against|sees|see|seeing|meet|meets|kisses|"
                            r"embraces|follows?|following|leaves|leaving|hands|gives|"
                            r"addressing|joins|approaches|watches|ushers\s+in|shows\s+in|"
                            r"admits|brings\s+in)\s*(?:the\s+)?$", re.I)
_PRONOUN = re.compile(r"\b(he|she|they|him|her|them|himself|herself|themselves|all|both|everyone|"
                      r"everybody|omnes|the\s+others|the\s+rest)\b", re.I)
_SUBJECT_PRONOUNS = {"he", "she", "they", "all", "both", "everyone", "everybody", "omnes"}
_EVERYONE = {"they", "all", "both", "everyone", "everybody", "omnes", "the others", "the rest"}
_VERB_AFTER_NAME = re.compile(r"^\s+(?!as\b|this\b|his\b|its\b|towards\b|always\b|upstairs\b|"
                              r"downstairs\b|afterwards\b|across\b|thus\b|us\b|is\s+seen\b)"
                              r"(?:is|are|has|was|[a-z]+s)\b")
# a sentence that opens with what someone does (`Falls and dies.`, `Rising, goes out.`)
_VERB_FIRST = re.compile(r"^\W*(?!(?:lights|trumpets|drums|bells|voices|shouts|alarums|sounds|noises|"
                         r"others|servants|attendants|lords|soldiers|guards|citizens|ladies|"
                         r"gentlemen|thunder|lightning|music|flourish|enter|exit|exeunt)\b)"
                         r"[A-Z][a-z]+(?:s|ing|ed)\b(?![’']s)")
_BUT = re.compile(r"\b(?:all\s+)?(?:but|except|save)\b", re.I)
_ABBREVIATIONS = frozenset("mr mrs ms dr st hon rev capt col gen lt sgt prof jr sr mme mlle messrs "
                           "no vol".split())
OFFSTAGE = re.compile(
    r"^\W*(?:within|without|off|off-?stage|outside|behind\s+the\s+scenes|in\s+the\s+distance|"
    r"from\s+(?:within|without|outside|off))\b|"
    r"\b(?:calls?|calling|speaks?|speaking|cries|crying|shouts?|shouting|sings?|singing|answers?|"
    r"answering|replies|replying|heard|is\s+heard|voice)(?:\s+(?:out|loudly|aloud))?\s+"
    r"(?:within|without|outside|off-?stage|off\s+stage|behind\s+the\s+scenes|from\s+(?:within|"
    r"without|outside|off|the\s+(?:other|next|inner|adjoining)\s+room|(?:his|her|their|the)\s+"
    r"(?:\w+\s+)?(?:room|study|bedroom|chamber|window|house|hall|kitchen|garden|library)))\b", re.I)
_FROM_ROOM = re.compile(r"^\s*,?\s*from\s+(?:the|his|her|their)\s+(?:other|next|inner|adjoining)\s+"
                        r"(?:room|\w+)\b", re.I)


# a direction inside a speech: [..], (..), or a whole _italic_ span that is not a word's
# emphasis (it holds a space or ends a sentence)
_INLINE = re.compile(r"_?\[[^\]]*\]_?|_?\([^)]*\)_?|(?<![\w])_(?=[^_]*[ .])[^_]+_(?![\w])")


def split_speech(text: str, whole: bool = False) -> list[tuple[bool, str]]:
    """A speech's pieces in order: (True, direction) or (False, spoken words); `whole`:
    also the bits between directions that hold no word, so that the pieces join back into
    the text."""
    out: list[tuple[bool, str]] = []
    pos = 0
    for m in _INLINE.finditer(text):
        if whole and text[pos:m.start()] or text[pos:m.start()].strip(" .,;:-—"):
            out.append((False, text[pos:m.start()]))
        out.append((True, m.group()))
        pos = m.end()
    if whole and text[pos:] or text[pos:].strip(" .,;:-—"):
        out.append((False, text[pos:]))
    return out


def clean(text: str) -> str:
    """A direction without its italic markers and outer brackets, on one line."""
    text = re.sub(r"(?<![\w])_+|_+(?![\w])", "", text)
    return " ".join(text.split()).strip(" []()")


def sentences(text: str) -> list[tuple[int, str]]:
    """(offset, sentence): split after `.`, `!`, `?` before a capital (not after `Mr.` or a
    stage position such as `L.H.`), and at `;`, `:` and dashes."""
    out: list[tuple[int, str]] = []
    start = 0
    for m in re.finditer(r"[.!?]+[\])]?\s+(?=[\[(\"'‘“]?[A-Z])|;\s*|:\s+|\s+[—–]\s+|--|—", text):
        if m.group().startswith("."):
            word = re.findall(r"([A-Za-z]+)$", text[start:m.start()])
            if word and (word[0].casefold() in _ABBREVIATIONS or len(word[0]) == 1):
                continue
        out.append((start, text[start:m.start()]))
        start = m.end()
    out.append((start, text[start:]))
    return [(o, s) for o, s in out if s.strip()]


def offstage_voice(direction: str) -> bool:
    """A speaker's direction saying the voice comes from off stage (`Within`, `calls out
    from his room`); `Calling off` is someone on stage calling out."""
    return bool(OFFSTAGE.search(clean(direction)))


class _Reader:
    def __init__(self, find: Finder, actor: str | None, stage: set[str], dead: set[str]):
        self.find = find
        self.actor = actor
        self.stage = set(stage)
        self.dead = dead
        self.last_subject: frozenset[str] | None = None
        self.moves: list[Move] = []
        self.touched: set[str] = set()  # moved in the sentence being read

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
                return self.resolve(self.group_back(mentions, k, sentence), subject=True)
            first = mentions[0]
            if _LEAD.match(sentence[:first.start]) and (first.names is not None
                                                        or first.word in _SUBJECT_PRONOUNS):
                return self.resolve(self.group_forward(mentions, 0, sentence), subject=True)
            return None
        if _LEAD.match(sentence[:at]) or _VERB_FIRST.match(sentence):  # `Falls and dies.`
            return frozenset({self.actor}) if self.actor else None
        return None

    def listed(self, sentence: str, mentions: list[_Mention], at: int) -> tuple[frozenset[str], bool]:
        """The names listed after a Latin verb (`Enter A, B and C (R.H.)`), and whether
        anything is named there at all (a capitalised word outside the cast counts)."""
        out: set[str] = set()
        pos = at
        for m in mentions:
            if m.start < at:
                continue
            if m.names is None or not _LIST_GLUE.match(sentence[pos:m.start]):
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
        if kind in (ENTER, APPEAR, HIDE):
            self.stage |= names
        elif kind in (EXIT, DIE, OFF):
            self.stage -= names

    def read(self, text: str, opening: bool) -> list[Move]:
        for _, sentence in sentences(clean(text)):
            self.sentence(sentence, opening)
        return self.moves

    def sentence(self, sentence: str, opening: bool) -> None:
        mentions = self.mentions(sentence)
        hits = []
        for kind, pattern in _VERBS:
            for m in pattern.finditer(sentence):
                if not any(a < m.end() and m.start() < b for _, a, b in hits):
                    hits.append((kind, m.start(), m.end()))
        hits.sort(key=lambda h: h[1])
        self.touched = set()
        for kind, start, end in hits:
            self.verb(kind, sentence, mentions, start, end)
        moved = self.touched
        for m in mentions:
            if m.names and _FROM_ROOM.match(sentence[m.end:]):
                self.move(OFF, m.names)
                moved |= m.names
        for k, m in enumerate(mentions):
            if not m.names or m.names & moved or m.names <= self.stage or m.names & self.dead:
                continue
            subject = k == 0 and _LEAD.match(sentence[:m.start]) and not _OBJECT_BEFORE.search(
                sentence[:m.start])
            if subject:  # the subject of what is done on stage (`The NURSE opens the door`)
                self.move(ENTER if opening else APPEAR, m.names)
            elif opening:  # the first direction of a scene: whoever is named is about
                self.move(APPEAR, m.names)

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
            elif not named:
                subject = self.subject(sentence, mentions, start) if kind == "latin_exit" else None
                self.move(EXIT, subject if subject else self.everyone() if kind == "latin_exeunt"
                          else {self.actor} if self.actor else set())
            return names
        if kind in ("carry_in", "carry_out", "carry_obj"):
            return self.carry(kind, sentence, mentions, start, end)
        who = self.subject(sentence, mentions, start)
        if who is None:
            return None
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


def read(text: str, find: Finder, actor: str | None, stage: set[str], dead: set[str] = frozenset(),
         opening: bool = False) -> list[Move]:
    """The moves a direction makes, in order. `actor` does what no one is named for (the
    speaker of the speech the direction stands in, else the last speaker); `stage` is who
    is present before it; `opening`: the first direction of a scene, where whoever is named
    is on stage."""
    return _Reader(find, actor, stage, set(dead)).read(text, opening)


_CARRY_OFF = re.compile(rf"\b(?:{_CARRY}|{_USHER})\s+(?:[\w'’.-]+\s+){{0,5}}?(?:into|off|out|away|in)\b",
                        re.I)


def moves_anyone(text: str) -> bool:
    """Whether a direction may bring someone on or take someone off (inside a speech, such
    a direction is an action of its own, so that who hears the words after it can differ)."""
    text = clean(text)
    return any(kind not in ("shut", "carry_obj", "appear", "hide") and p.search(text)
               for kind, p in _VERBS) or bool(_CARRY_OFF.search(text) or OFFSTAGE.search(text))
