"""Paragraphs of prose → drafts: each quotation given to its speaker by the rules in
`dialogue.py`, a paragraph with several speakers split into one action each, the narration
around them kept (without the speech tags) where it says something."""

from __future__ import annotations

import re
from typing import NamedTuple

from bookmarks.stories.attribution_check import (
    REASONS,
    described_several,
    quote_reasons,
    several_described,
    shared_names,
)
from bookmarks.stories.attribution_context import main_subjects
from bookmarks.stories.dialogue import NARRATOR, Cast, Para, _read, find_narrator
from bookmarks.stories.quotes import join_quotes, quote_style
from bookmarks.stories.speakers import NameChecker
from bookmarks.stories.story import NARRATION
from bookmarks.stories.tags import (
    TITLES,
    VERB_WORD,
    Tag,
    beat,
    clause_subject,
    gesture_only,
    is_tag_only,
    last_sentence,
    mask_abbreviations,
    tag_before,
    unknown_tag,
)

LOOKBACK = 3  # paragraphs searched back for a pronoun's antecedent
LONG_NARRATION = 120  # words: a narration paragraph this long ends an exchange
_PRONOUNS = {"he": "m", "she": "f", "it": "n"}
# a sentence that only says someone begins to speak: their words are the next paragraph
_ONSET = re.compile(r"(?:\s+(?:[a-z]+ly|then|now|at\s+last|at\s+once|at\s+length|again|quickly))*\s+"
                    r"(?:broke\s+in|put\s+in|struck\s+in|chimed\s+in|interrupted|interposed|spoke(?:\s+up)?|"
                    r"began|resumed|went\s+on|continued|answered|replied|rejoined|spoke\s+first|"
                    r"broke\s+(?:the\s+)?(?:[a-z]+\s+)?silence|stepped\s+(?:[a-z]+ly\s+)?into\s+the\s+breach|"
                    r"plunged\s+in(?:\s+[a-z]+ly)?(?:\s+to\s+[a-z]+\s+a\s+diversion)?|found\s+(?:his|her)\s+"
                    r"(?:tongue|voice)|took\s+up\s+(?:the|its|his|her)\s+(?:tale|word|thread|conversation|argument))"
                    r"(?:\s+(?:[a-z]+ly|again|at\s+last|at\s+once|at\s+length))*\s*[.!]\s*")
# the last clause of a sentence, after which its subject may begin to speak
_THEN_CLAUSE = re.compile(r",\s+(?:after\s+which|whereupon|upon\s+which|and\s+then|and|but|when)\s+")
# `… it was again Father Brown who was speaking:`: the one named says the next paragraph
_CLEFT_SPEAKER = re.compile(r"\b[Ii]t\s+was\s+(?:again\s+|now\s+|then\s+|still\s+)?"
                            r"(?P<s>(?:the\s+)?[A-Z][\w.’'-]*(?:\s+[A-Z][\w.’'-]*)*)\s+who\s+(?:was\s+|had\s+)?(?:speaking|talking|spoke|"
                            r"spoken|began|went\s+on|continued|answered|replied)\s*:$")
# a quotation inside a quotation (someone else's words, reported): `‘…, Mr. Hallward?’`
_NESTED = re.compile(r"(?<!\w)‘.*?’(?!\w)|(?<!\w)'.*?'(?!\w)|“[^”]*”|\"[^\"]*\"", re.S)


class Draft(NamedTuple):
    """One action before validation: its file line, speaker (or narration), text, chapter."""

    line: int
    character: str
    text: str
    chapter: str | None
    check: str | None = None  # why a writer should check its speaker (attribution_check.py)


class Resolver:
    def __init__(self, paras: list[Para], cast: Cast, narrator: str | None) -> None:
        self.paras, self.cast, self.narrator = paras, cast, narrator
        self.events: list[list[tuple[int, str, bool]]] = [[] for _ in paras]  # per paragraph
        self.recent: list[str] = []
        self.tags: list[list[Tag | None]] = [[] for _ in paras]  # the tag each quote used
        self.stage = ""  # how the last pronoun was resolved (shown in `Para.how`)
        self.took_turn = -1  # the narration paragraph that gave someone a turn
        self._at = {id(p): i for i, p in enumerate(paras)}

    def at(self, p: Para) -> int:
        """Where paragraph p is (by identity: `list.index` compares whole paragraphs, which
        made a long novel's import quadratic)."""
        return self._at[id(p)]

    # --- names and pronouns --------------------------------------------------------------

    def resolve(self, tag: Tag, pi: int, pos: int) -> str | None:
        s = tag.subject
        if s == "I":
            return self.narrator
        if s.casefold() in _PRONOUNS:
            return self.pronoun(_PRONOUNS[s.casefold()], pi, pos)
        if s.casefold() in ("they", "we"):
            return None
        return self.cast.lookup(s)

    def pronoun(self, g: str, pi: int, pos: int) -> str | None:
        """The character `he`/`she`/`it` is: the paragraph's nearest subject of that gender
        (or of a gender the text never shows); else the one character of that gender the
        paragraph mentions; else, in a running exchange, the one of the two who fits (the
        one who spoke before last when both do); else the one character of that gender
        among the speakers and subjects of the few paragraphs before."""
        here = sorted(e for e in self.events[pi] if e[0] < pos)
        self.stage = "subject"
        for _, name, subject in reversed(here):
            if subject and (fits_gender(g, gs := self.cast.gender(name)) or not gs):
                return name
        self.stage = "mention"
        fits = {name for _, name, _ in here if g in self.cast.gender(name)}
        if fits:
            return fits.pop() if len(fits) == 1 else None
        if pi and self.paras[pi - 1].chapter == self.paras[pi].chapter \
                and (any(self.paras[pi - 1].speakers) or self.took_turn == pi - 1):
            self.stage = "exchange"  # of the last two speakers, the one who fits (also after a
            # narration paragraph that gave one of them a turn: `He chuckled to himself.`)
            pair = {n for n in self.recent[-2:] if g in self.cast.gender(n)}
            if pair:
                return pair.pop() if len(pair) == 1 else None
        self.stage = "back"
        for back in range(1, LOOKBACK + 1):
            if pi - back < 0 or self.paras[pi - back].chapter != self.paras[pi].chapter:
                break
            for _, name, subject in sorted(self.events[pi - back], reverse=True):
                gs = self.cast.gender(name)
                if subject and (g in gs or (not gs and back == 1 and not any(self.paras[pi - 1].speakers))):
                    return name  # `The Captain bowed.` ¶ `"…," he asked.`
        return None

    # --- one paragraph ---------------------------------------------------------------------

    def run(self) -> None:
        chapter = object()
        for pi, p in enumerate(self.paras):
            if p.chapter != chapter:
                chapter, self.recent = p.chapter, []
            for k in range(len(p.segs)):
                start = p.segs[k][0]
                self.events[pi] += [(start + s, name, subj)
                                    for s, _, name, subj in self.cast.mentions(p.seg(k))]
            p.speakers = [None] * len(p.quotes)
            p.how = [""] * len(p.quotes)
            self.tags[pi] = [None] * len(p.quotes)
            speech = [i for i, q in enumerate(p.quotes) if q.speech]
            for i in speech:
                p.speakers[i] = self.explicit(pi, p, i)
                if p.speakers[i]:
                    self.events[pi].append((p.quotes[i].start, p.speakers[i], True))
            self.backward(p, speech)
            if speech and not any(p.speakers) and "unknown" not in p.how:
                if who := self.turn(pi, p):
                    for i in speech:
                        p.speakers[i], p.how[i] = who, "turn"
                    self.events[pi].append((p.quotes[speech[0]].start, who, True))
            self.settle(pi, p, speech)
            self.update_exchange(p, speech)

    def settle(self, pi: int, p: Para, speech: list[int]) -> None:
        """A last look at a paragraph's speakers once all rules had their say (the stricter
        rules correct them here)."""

    def explicit(self, pi: int, p: Para, i: int) -> str | None:
        who, p.how[i] = self._explicit(pi, p, i)
        return who

    def _explicit(self, pi: int, p: Para, i: int) -> tuple[str | None, str]:
        q = p.quotes[i]
        if (tag := p.after[i]) and not (p.before[i] and _new_sentence(q.text, p.seg(i + 1))):
            # (`the inspector said, "Are we after lunatics?" The waiter went on …:` — the
            # inspector's: a new sentence after a line with a tag of its own leads on)
            self.tags[pi][i] = tag
            self.stage = ""
            who = self.resolve(tag, pi, p.segs[i + 1][0] + tag.start)
            return who, f"after:{tag.subject}{self.stage}" if who or _pronoun(tag) else "unknown"
        seg = p.seg(i)
        self.stage = ""
        if tag := p.before[i]:
            self.tags[pi][i] = tag
            who = self.resolve(tag, pi, p.segs[i][0] + tag.start)
            if who is None and i and p.speakers[i - 1] and is_tag_only(seg) \
                    and tag.subject.casefold() in _PRONOUNS:
                return p.speakers[i - 1], "same"  # `said Two, going down as he spoke, "…"`
            return who, f"before:{tag.subject}{self.stage}" if who or _pronoun(tag) else "unknown"
        if unknown_tag(p.seg(i + 1), after=True) or unknown_tag(seg, after=False):
            return None, "unknown"
        named = self.cast.mentions(text := _unbracket(seg))
        others = {n for _, _, n, _ in named} - {p.speakers[i - 1] if i else None}
        if i and p.speakers[i - 1] and is_tag_only(seg) and not {
                n for at, _, n, subject in named if subject and not _SUBORDINATE.search(text, 0, at)
        } - {p.speakers[i - 1]}:
            return p.speakers[i - 1], "same"  # `said Mr. Casaubon, not keeping pace with Mr.
            # Brooke's impetuous reason, "…"`: a name inside the tag's phrase speaks not
        if i and p.speakers[i - 1] and not others and (
                seg.strip(" ,;:—–-") in ("", "or", "and") or _bracketed(seg)):
            return p.speakers[i - 1], "same"
        if i and p.speakers[i - 1] and q.text.lstrip(" “‘\"'—–-")[:1].islower() \
                and re.search(r"[,;—–-]\W*$", p.quotes[i - 1].text):
            return p.speakers[i - 1], "resumed"  # `"…away,"—X and Y exchanged glances,—"for I …"`
        if (b := beat(seg)) and not seg.rstrip().endswith(")"):
            return self.resolve(b, pi, p.segs[i][0] + b.start), f"beat:{b.subject}"
        if i:
            return (p.speakers[i - 1], "inherit") if p.speakers[i - 1] and not others else (None, "")
        if q.start < 5 and (prev := self.last_quoted(pi)) is not None and not prev.quotes[-1].closed:
            return prev.speakers[-1], "continued"
        if pi and not seg.strip() and not self.paras[pi - 1].quotes:
            return self.introduced(pi - 1), "introduced"
        return None, ""

    def backward(self, p: Para, speech: list[int]) -> None:
        """An untagged quotation followed by an action of a speaker (`"A wub?" Franco stared.
        "What's a wub?"`, `"Yes!" The child raised her head.`) is theirs."""
        for i in reversed(speech):
            if p.speakers[i] or p.how[i] == "unknown" or i + 1 >= len(p.quotes):
                continue  # the beat must lead to another quotation: `"…" Mr. Lee bowed.` is a reply
            seg = p.seg(i + 1)
            masked = mask_abbreviations(seg.strip())
            first = seg.strip()[:len(re.split(r"(?<=[.!?])\s+", masked, maxsplit=1)[0])]
            if not first or first[:1].islower() or VERB_WORD.search(first):
                continue
            found = [(s, n, subj) for s, _, n, subj in self.cast.mentions(first)]
            if found and found[0][2] and found[0][1] in self.cast.speakers \
                    and {n for _, n, _ in found} == {found[0][1]}:
                p.speakers[i], p.how[i] = found[0][1], "after-beat"
            elif not found and (sub := clause_subject(first)) and sub[1] in ("He", "She"):
                # `"I shall like it better." She waited while he cut the lemon. "But …"`
                at = p.segs[i + 1][0] + seg.index(first) + sub[0]
                who = self.pronoun(_PRONOUNS[sub[1].casefold()], self.at(p), at)
                if who and who in self.cast.speakers:
                    p.speakers[i], p.how[i] = who, f"after-beat:{self.stage}"

    def last_quoted(self, pi: int) -> Para | None:
        for back in range(pi - 1, max(-1, pi - 4), -1):
            if self.paras[back].quotes:
                return self.paras[back]
        return None

    def introduced(self, pi: int) -> str | None:
        """A narration paragraph that ends by introducing the next one's speech (`Then Ben
        Rogers says:`, `And he put it to us in this way:`)."""
        text = re.sub(r"[:,]?\s*(?:[—–]|--)[—–-]*$", ":", self.paras[pi].text.rstrip())  # `said:—`, `said,--`
        _, last = last_sentence(text)
        if (cleft := _CLEFT_SPEAKER.search(last)) and (found := self.cast.lookup(cleft.group("s"))):
            return found
        if not (text.endswith(":") or re.search(r"\b(?:thus|as follows|in this way|these words)\b", last)):
            for cut in [0, *(m.end() for m in _THEN_CLAUSE.finditer(last))][::-1]:
                found = clause_subject(last[cut:])  # `At this point the clever lady broke in.`,
                # `The talk fell during the rubber, after which Stuart took up its thread.`
                if found and _ONSET.fullmatch(last[cut + found[0] + len(found[1]):]):
                    at = len(text) - len(last) + cut + found[0]
                    return self.resolve(Tag(found[1], at, len(text)), pi, at + 1)
            return None
        tag = tag_before(text)
        if tag is None and len(clauses := main_subjects(last)) > 1:  # `Pollyanna paused for breath,
            at = len(text) - len(last) + clauses[0][0]  # and Nancy managed to stammer:`: the last
            tag = Tag(clauses[0][1], at, len(text), verb=False)  # clause's subject speaks
        tag = tag or beat(text.rstrip(".") + ":")
        return self.resolve(tag, pi, tag.start + 1) if tag else None

    # --- turn-taking -----------------------------------------------------------------------

    def turn(self, pi: int, p: Para) -> str | None:
        """Turn-taking: in an exchange of two (A B, A B A …) or around one central speaker
        (A B A C …), an untagged paragraph right after a speech (or after narration that
        gave one of the two a turn: `Mr. Hartley said that he had not.`) is the one who
        spoke before last. After other narration the rules are unsure: it stays narration."""
        r = self.recent
        if len(r) < 2 or not (len(r) == 2 or r[-3] == r[-1] or (len(r) >= 4 and r[-4] == r[-2])):
            return None
        if not (pi and any(self.paras[pi - 1].speakers)) and self.took_turn != pi - 1:
            return None
        who, other = r[-2], r[-1]
        tags = [t for t in [*p.after, *p.before] if t and _pronoun(t)]
        if any(_PRONOUNS.get(t.subject.casefold()) not in (None, *self.cast.gender(who))
               and self.cast.gender(who) for t in tags):
            return None  # `she said` where the turn would give a man
        narration = " ".join(p.seg(k) for k in range(len(p.segs)))
        if {n for _, _, n, _ in self.cast.mentions(narration)} & self.cast.speakers - {who, other}:
            return None
        if any(who in self.addressed(q.text) for q in p.quotes if q.speech):
            return None
        return who

    def addressed(self, text: str) -> set[str]:
        """Characters a quotation speaks to by name (`"Mr. Bennet, how can you …"`,
        `"Not a bit, Doctor."`, `"my dear Watson"`)."""
        out = set()
        text = _NESTED.sub(lambda m: " " * len(m.group(0)), text)  # `‘…, Mr. Hallward?’ she said`
        for start, end, name, _ in self.cast.mentions(text):
            before, after = text[:start].rstrip(), text[end:end + 2]
            opening = not before or before[-1:] in ",;!?.—–-" or re.search(r"\b(?:[Dd]ear|[Oo]h?)$", before)
            if opening and (not after or after[:1] in ",!?.;—–-"):
                out.add(name)
        return out

    def update_exchange(self, p: Para, speech: list[int]) -> None:
        said = [s for s in p.speakers if s]
        if said:
            for s in said:
                if not self.recent or self.recent[-1] != s:
                    self.recent.append(s)
            self.recent = self.recent[-4:]
            return
        if speech:  # an untagged line nobody could place: the exchange is lost
            self.recent = []
            return
        mentions = [m for m in self.cast.mentions(p.text) if m[2] in self.cast.speakers]
        named = {n for _, _, n, _ in mentions}
        subjects = {n for _, _, n, s in mentions if s}
        if len(named) == 1 and subjects == named and len(p.text.split()) <= 30 and not gesture_only(p.text) \
                and len(set(self.recent[-1:]) | named) == 2 \
                and (len(self.recent) <= 1 or named <= set(self.recent[-2:])):
            self.recent.append(named.pop())  # `Mr. Hartley said that he had not.`: his turn
            self.took_turn = self.at(p)
        elif subjects - set(self.recent[-2:]) or len(p.text.split()) > LONG_NARRATION:
            self.recent = []  # someone else comes in, or the scene moves on


def _new_sentence(quote: str, after: str) -> bool:
    """The narration after a quotation that ends a sentence opens a new one."""
    return quote.rstrip(" _’'”\"")[-1:] in ".!?" and after.lstrip(" _")[:1].isupper()


def _fold(name: str) -> str:
    return re.sub(r"^(?:the|a|an)\s+", "", " ".join(name.casefold().split()))


_BARE_TITLE = re.compile(rf"(?:the\s+)?(?:{TITLES})\.?", re.I)


def _bare_title(name: str) -> bool:
    return bool(_BARE_TITLE.fullmatch(name))


def _pronoun(tag: Tag) -> bool:
    return tag.subject.casefold() in (*_PRONOUNS, "they", "we")


def fits_gender(g: str, genders: set[str]) -> bool:
    """`he`/`she` fit a character of that gender, or an animal the text calls `it`."""
    return g in genders or (g != "n" and genders == {"n"})


def _bracketed(seg: str) -> bool:
    s = seg.strip(" ,;:—–-")
    return s.startswith("(") and s.endswith(")")


# a clause that hangs on the tag's (`said Jasper, as he entered the room where his mother and
# Maud were busy, "…"`): its subjects are not the one who speaks next
_SUBORDINATE = re.compile(r"\b(?:as|while|whilst|when|where|because|though|although|since|until|till|"
                          r"that|who|whom|which|whose)\b", re.I)


def _unbracket(seg: str) -> str:
    return re.sub(r"\([^()]*\)", " ", seg)


# --- drafts ----------------------------------------------------------------------------------


def _narration(text: str) -> str | None:
    text = re.sub(r"\s+", " ", text).strip(" ,;:—–-")
    text = re.sub(r"^[.!?)\]]+\s*", "", text)
    words = re.findall(r"[A-Za-z]+", text)
    if len(words) < 3 or (len(words) < 5 and text[:1].islower()):
        return None  # what is left of a tag: `in a low voice`, `to Mr. Hartley`
    return text if text[-1:] in ".!?”\"’')" else text + "."


def all_drafts(paras: list[Para], tags: list[list[Tag | None]]) -> list[Draft]:
    """Every paragraph's actions, each line that a rule gave a speaker marked with why to
    check it (see attribution_check.py)."""
    several = several_described([p.text for p in paras], [t.subject for row in tags for t in row if t])
    drafts = [d for pi, p in enumerate(paras) for d in drafts_of(p, tags[pi], several)]
    shared = shared_names({d.character for d in drafts if d.character != NARRATION})
    return [d._replace(check=REASONS["shared"]) if d.check is None and d.character in shared
            else d for d in drafts]


def drafts_of(p: Para, tags: list[Tag | None], several: frozenset[str] = frozenset()) -> list[Draft]:
    if not any(p.speakers):
        return [Draft(p.line, NARRATION, p.text, p.chapter)]
    out: list[Draft] = []
    buf: list[str] = []
    speech: list[str] = []
    who: str | None = None
    doubtful = {k for k, t in enumerate(tags[:len(p.quotes)])
                if t is not None and described_several(t.subject, several)}
    reasons = quote_reasons(p.how, p.speakers, doubtful) if len(p.how) == len(p.speakers) \
        else [REASONS["context"]] * len(p.speakers)
    held: list[str | None] = []  # the reasons of the quotations in `speech`

    def flush_speech() -> None:
        nonlocal speech, who, held
        if speech and who:  # one quotation the rules are sure of vouches for the speech
            check = None if None in held else held[0]
            out.append(Draft(p.line, who, join_quotes(speech), p.chapter, check))
        speech, who, held = [], None, []

    def flush_narration() -> None:
        nonlocal buf
        if text := _narration(" ".join(buf)):
            out.append(Draft(p.line, NARRATION, text, p.chapter))
        buf = []

    for k in range(len(p.segs)):
        seg = p.seg(k)
        if k < len(p.quotes) and p.speakers[k] and (t := tags[k]) and t is p.before[k] \
                and t.end - t.start <= len(t.subject) + 25:
            seg = seg[:t.start] + " " * (t.end - t.start) + seg[t.end:]  # `Harker said,`
        if k and p.speakers[k - 1] and (t := p.after[k - 1]) and tags[k - 1] is t:
            seg = " " * t.end + seg[t.end:]  # `, said the Hatter`
        if k < len(p.quotes):
            q = p.quotes[k]
            speaker = p.speakers[k]
            if speaker and speaker == who and _narration(seg) is None:
                speech.append(q.text)
                held.append(reasons[k])
                continue
            if speaker:
                flush_speech()
                buf.append(seg)
                flush_narration()
                who, speech, held = speaker, [q.text], [reasons[k]]
            else:
                flush_speech()
                buf += [seg, p.text[q.start:q.end]]
        else:
            flush_speech()
            buf.append(seg)
    flush_speech()
    flush_narration()
    return out


def attribute_dialogue(
    paragraphs: list[tuple[int, str, str | None]],
) -> tuple[list[Draft], dict[str, list[str]]]:
    """Paragraphs (line, text, chapter) of prose → drafts and {character: aliases}."""
    text = "\n\n".join(t for _, t, _ in paragraphs)
    paras = _read(paragraphs, quote_style(text))
    checker = NameChecker(text)
    narrator, forms = find_narrator(paras, checker)
    cast = Cast(paras, checker, narrator, forms)
    resolver = Resolver(paras, cast, narrator)
    resolver.run()
    drafts = all_drafts(paras, resolver.tags)
    spoken = {d.character for d in drafts}
    aliases = {person.name: sorted(f for f in person.forms if _fold(f) != _fold(person.name)
                                   and not _bare_title(f))
               for person in cast.people.values() if person.name in spoken}
    if narrator == NARRATOR and NARRATOR in spoken:
        aliases.setdefault(NARRATOR, [])
    return drafts, {k: v for k, v in aliases.items() if v}
