"""The words of stage directions: the verbs of coming and going, where people go, how a
direction is cut into sentences and a speech into words and directions (see directions.py
for how they are read)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bookmarks.stories.names import one_of

ENTER, EXIT, DIE, HIDE, APPEAR, OFF, SHUT = "enter", "exit", "die", "hide", "appear", "off", "shut"
ACT = "act"  # someone not on stage is said to do something there: present, for a while


@dataclass(frozen=True)
class Move:
    kind: str
    names: frozenset[str]


def _forms(*stems: str) -> str:
    """`go` → go|goes|going|went… from "go:goes:going" style stems, as a prefix tree
    (`names.one_of`): a flat list of a hundred verbs tried at every position was most of
    the time presence took on a novel. Every use ends the word (`\\s+`, `\\b`), so the
    tree matches what the flat list did."""
    return one_of({f for s in stems for f in s.split(":")})


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
# a novel's narration tells it in the past (`Poole went out`, `She hurried away`): only out
# and in, where a reader is sure the scene stays (`went up the passage` takes it along)
_MOTION_PAST = _forms("went:ran:rushed:hurried:walked:swept:stormed:stalked:stole:slipped",
                      "staggered:dashed:marched:crept:strode:limped:flounced:darted:stumbled",
                      "tottered:bustled:glided:flew:hastened:trotted:raced:bolted:sauntered",
                      "strolled:slunk:sneaked:tiptoed:crawled:scrambled:scampered:trooped",
                      "shuffled:trudged:plodded:rode:drove:stepped:got")
_GO = "go|goes|going"
_CARRY = _forms("take:takes:taking", "lead:leads:leading", "get:gets:getting",
                "carry:carries:carrying", "bear:bears:bearing", "drag:drags:dragging",
                "hurry:hurries:hurrying", "send:sends:sending", "escort:escorts:escorting",
                "conduct:conducts:conducting", "hustle:hustles:hustling")
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
    ("enter", r"\b(?:re-?enters|enters|entering|re-?entering)\b"),
    ("enter", r"\b(?:comes?|coming|came)\s+(?:in|on|back|out\s+(?:of|from))\b(?!\s+and\s+out)"),
    ("enter", r"\b(?:returns?|returning|reappears?|reappearing|arrives?|arriving|appears?|"
              r"appearing|returned|reappeared|arrived|appeared)\b"),
    ("enter", r"\bentered\b(?=\s+(?:the\s+)?(?:room|hall|house|study|library|kitchen|parlour|parlor|"
              r"office|shop|inn|bar|cabin|chamber|drawing-room|dining-room)\b|\s*[.,;]|$)"),
    ("enter", rf"\b(?:{_MOTION}|{_MOTION_PAST})\s+in\b(?!\s+and\s+out|\s+(?:a|an|the|his|her|their)\b)"),
    ("enter", r"\b(?:runs?|running|rushes|rushing|hurries|hurrying|walks?|walking|steps?|stepping|"
              r"strolls?|strolling|ambles?|ambling|marches|marching|dashes|dashing)\s+(?:on|aboard)\b"
              r"(?=\s*(?:[.,;]|$|with\b|from\b|and\b))"),
    ("enter", r"\b(?:looks?|looking|peeps?|peeping)\s+(?:in(?=\s*(?:[.,;]|$|and\b))|into\s+the\s+room)"),
    ("enter", r"\b(?:is|are)\s+discovered\b|\bdiscovered\b"),
    ("appear", r"\b(?:is|are)\s+seen\b|\bopens?\s+the\s+(?:\w+\s+)?door\b"),
    ("appear", r"(?<!knocks )(?<!knock )(?<!knocking )\b(?:in|at)\s+the\s+(?:open\s+|half-open\s+|"
               r"\w+\s+)?(?:doorway|door)\b"),
    ("die", r"\b(?:dies|die)\b|\b(?:falls?|drops?)\s+dead\b|\b(?:is|are)\s+(?:killed|slain)\b|"
            r"\bexpires\b|\bbreathes\s+(?:his|her)\s+last\b"),
    ("hide", r"\bhides?\b|\bhiding\b|\bconceals?\s+(?:himself|herself|themselves)\b"),
    ("exit", r"\bexits\b|\b(?:departs?|departing|disappears?|disappearing|vanish(?:es)?|vanishing|"
             r"departed|disappeared|vanished)\b"),
    ("enter", rf"\b(?:{_MOTION}|peeps?|peeping|looks?|looking|comes?|coming)\s+(?:out|forth|forward)\s+"
              rf"(?:of|from)\s+(?:behind|under|beneath|his|her|their|the\s+(?:{_PLACE_HIDE}))\b"),
    ("exit", rf"\b(?:{_MOTION}|{_MOTION_PAST})\s+(?:out|off|away)\b"),
    ("exit", rf"\b(?:{_GO})\s+in\b(?=\s*(?:[.,;]|$|and\b|to\b|again\b))"),
    ("exit", r"\b(?:go|goes)(?=\s*(?:[.,;]|$))"),  # `He goes.`; not `Going.` (may be called back)
    ("go_into", rf"\b(?:{_MOTION})\s+(?:back\s+)?into\b"),
    ("exit", rf"\b(?:{_MOTION})\s+(?:up|down)(?:stairs\b|\s+the\s+(?:\w+\s+)?(?:stairs|steps|"
             rf"staircase|garden|street|road|path|lane|avenue|hill|walk|passage|corridor)\b)"),
    ("exit", rf"\b(?:{_MOTION})\s+(?:out\s+)?through\s+the\s+(?:\w+\s+)?(?:door|doors|doorway|gate|"
             rf"window|hall|arch|archway|curtains?|garden|{_ROOM})\b"),
    ("leave", r"\b(?:leaves|leave|leaving)\b|\bleft\b(?=\s+(?:him|her|them|us|me|the\s+(?:room|house|"
              r"hall|study|library|kitchen|parlour|parlor|office|shop|inn|bar|cabin|chamber|garden|table)"
              r"|\s*[.;]))"),
    ("withdraw", r"\b(?:withdraws?|withdrawing|retires?|retiring|withdrew|retired)\b"),
    ("exit", r"\b(?:is|are)\s+(?:carried|borne|dragged|led|taken|hurried|hustled)\s+(?:off|out|away)\b"),
    ("carry_obj", rf"\b(?:{_CARRY}|{_USHER})\b(?=\s)"),  # last: any other reading first
    ("shut", r"\b(?:shuts?|closes?)\s+the\s+(?:\w+\s+)?door\b"),
]]

_STAGE_POSITION = r"(?:\(?\b(?:[LRCUD]\.\s?)(?:[HCEU]\.\s?)*\)?|\([^()]{0,24}\))"
_LIST_GLUE = re.compile(rf"^(?:[\s,&]|\band\b|\bwith\b|\bfollowed\s+by\b|\bthe\b|\ball\b|\bboth\b|"
                        rf"{_STAGE_POSITION})*$", re.I)
# `Enter MAREN, keeper of the inn, with an armful of logs, and NELL`: a description between
_APPOSITIVE = re.compile(r"^[^.;:]*,\s*(?:and|&|with)\s+(?:the\s+)?$", re.I)
_GROUP_GLUE = re.compile(r"^(?:[\s,&]|\band\b)*$", re.I)
_SUBJECT_GAP = re.compile(r"^(?:[\s,]|\bwho\b|\bthen\b|\balso\b|\ball\b|\bboth\b|\bnow\b|\bagain\b|\bhad\b|"
                          r"\bat\s+once\b|\bthereupon\b|\bfinally\b|\bslowly\b|\bquickly\b|\bsoon\b|"
                          r"\bpresently\b|\b\w+ly\b|\bcan\b|\bmust\b|\bwill\b|\bsuddenly\b)*$", re.I)
_LEAD = re.compile(r"^(?:[\s,\[\(]|\bthe\b|\bthen\b|\band\b|\bbut\b|\bmeanwhile\b|\bnow\b|\bhere\b|"
                   r"\bat\s+(?:last|once|length)\b|\bsuddenly\b|\bpresently\b|\bfinally\b|\bsoon\b|"
                   r"\bagain\b|\b\w+ly\b|\bafter\s+a\s+(?:moment|pause|while)\b|\ba\s+little\s+later\b|"
                   # a novel's time before its subject: `That evening Mr. Utterson came home`
                   r"\b(?:that|the\s+next|the\s+following|next)\s+(?:morning|day|afternoon|evening|night)\b|"
                   r"\b(?:a|an|one|two|three|a\s+few|some)\s+(?:minutes?|hours?|days?|weeks?)\s+"
                   r"(?:later|afterwards?)\b|\bpresently\s+after\b)*$",
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
# `He throws the bags, and both clocks slide … and vanish`: another subject took over
_NEW_SUBJECT = re.compile(r"\b(?:and|while|but|as|when|then)\s+(?:the|a|an|both|two|all|his|her|their|its|"
                          r"one)\s+[a-z]+\s+(?!(?:and|to|of|in|on|at)\b)[a-z]+", re.I)
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


_CARRY_OFF = re.compile(rf"\b(?:{_CARRY}|{_USHER})\s+(?:[\w'’.-]+\s+){{0,5}}?(?:into|off|out|away|in)\b",
                        re.I)


def moves_anyone(text: str) -> bool:
    """Whether a direction may bring someone on or take someone off (inside a speech, such
    a direction is an action of its own, so that who hears the words after it can differ)."""
    text = clean(text)
    return any(kind not in ("shut", "carry_obj", "appear", "hide") and p.search(text)
               for kind, p in _VERBS) or bool(_CARRY_OFF.search(text) or OFFSTAGE.search(text))
