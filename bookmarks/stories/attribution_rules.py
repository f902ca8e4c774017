"""Stricter speaker rules on top of `attribute.Resolver`, for precision on texts the rules
were never tuned on (the entry point prose and Gutenberg novels use):

- **A reply is someone else.** A paragraph that opens with a quotation tagged only by a
  pronoun (`“…,” he answered`) after a paragraph of speech by X is not X's: it goes to the
  one other character of that gender in the exchange, or to nobody when there are
  several; with nobody else of that gender near, X goes on.
- **A pronoun that leads the narration is not the name after it.** In `Then he looked at
  Lord Henry. “…,” he said.` the speaker is the one the paragraph's `he` continues from
  the paragraph before (its only speaker or subject of that gender), never Lord Henry.
- **A vocative names the listener.** An untagged line that addresses X by name (`“…,
  Harry.”`) right after X spoke, in an exchange of X and one other speaker, is the
  other's (after the other's own line it stays unsure).
Where a rule is unsure it abstains: the line stays narration.
"""

from __future__ import annotations

import re

from bookmarks.stories.attribute import (
    LOOKBACK,
    Draft,
    Resolver,
    _bare_title,
    _fold,
    all_drafts,
    fits_gender,
)
from bookmarks.stories.attribution_calls import CallRules
from bookmarks.stories.attribution_context import (
    blank_quotes,
    former_latter,
    listeners,
    main_subjects,
    mark_written,
    pronoun_gender,
    sentences,
)
from bookmarks.stories.attribution_exchange import check_counts, check_turns, solve_exchanges
from bookmarks.stories.attribution_pronouns import _GENDER_WORDS, _THINGS_OF, PronounRules
from bookmarks.stories.attribution_relations import RelationRules
from bookmarks.stories.attribution_scene import _PERSON, SceneRules
from bookmarks.stories.attribution_turns import TurnRules, fill_between
from bookmarks.stories.dialogue import NARRATOR, Cast, _read, find_narrator
from bookmarks.stories.quotes import quote_style
from bookmarks.stories.speakers import GROUP_NUMBERS, NameChecker
from bookmarks.stories.tags import (
    ANAPHOR,
    PERSON_NOUNS,
    PRONOUN,
    PROPER,
    TITLES,
    beat,
    is_tag_only,
    tag_before,
)

__all__ = ["Draft", "StrictResolver", "attribute_dialogue"]

_SUBJECT_PRONOUN = {"m": "he", "f": "she"}
_DETERMINED = re.compile(r"(?:The|A|An|This|That|Each|One)\s")
_GROUP_NAME = re.compile(rf"(?:[Tt]he\s+)?(?:{GROUP_NUMBERS})\s", re.I)  # `The two Musketeers`
UNSURE = "\0unsure"  # the chain met someone the cast does not know: no guess
_PRONOUN_GENDER = {"he": "m", "she": "f", "it": "n"}
_TITLED = re.compile(r"(?:the\s+)?(?:king|queen|prince|princess|duke|duchess|captain|doctor|count|"
                     r"countess|baron|baroness|colonel|major|general|professor|judge|inspector|"
                     r"sergeant|lieutenant|master|mistress)$", re.I)  # a title: maybe anyone so titled



# a clause whose subject is one of several, unnamed: `One of them`, `the younger of the two`
_PARTITIVE = re.compile(r"[\s,;:—–-]*(?:(?:and|but|then|now|at\s+last)\s+)?(?:one|each|either|neither|"
                        r"(?:the\s+)?(?:elder|younger|older|taller|shorter|first|second|last))\s+of\s+"
                        r"(?:them|these|those|the\s+(?:\w+\s+)?\w+)\b", re.I)


_CLEFT = re.compile(rf"\s*It\s+was\s+((?:the\s+)?{PROPER}|the\s+[a-z]+)(?=[\s,.;:!?—–-])")


_CLEFT_NEXT = re.compile(rf"\s*It\s+was\s+((?:the\s+)?{PROPER}|the\s+[a-z]+)(?:,[^,;.!?]{{0,100}},)?\s+who\s+"
                         r"(?:had\s+)?(?:made|spoke|said|uttered|asked|put|added|answered|replied)\b")


TALE_WORDS = 80  # a speech this long may be a tale that the next paragraph goes on with


class StrictResolver(CallRules, PronounRules, RelationRules, SceneRules, TurnRules, Resolver):
    quote = -1  # the quotation whose tag is being resolved

    def explicit(self, pi: int, p, i: int) -> str | None:
        self.quote = i
        return super().explicit(pi, p, i)

    def _explicit(self, pi: int, p, i: int) -> tuple[str | None, str]:
        if teller := self._teller(pi, p, i):
            return teller, "story"
        who, how = super()._explicit(pi, p, i)
        if who is None and self.stage == "unsure":
            return None, "unknown"
        if who and how == "introduced" and who in self.addressed(p.quotes[i].text):
            return None, ""  # `Sir William addressed him:` … `"…, Mr. Darcy!"`: not Mr. Darcy's
        if who is None and how in ("", "introduced") and (m := _CLEFT.match(p.seg(i + 1))) \
                and (found := self.cast.lookup(m.group(1))):
            return found, "cleft"  # `'Sorry to keep you waiting, Nella.' It was Mr Racksole, …`
        if who is None and how in ("", "introduced") and i == len(p.quotes) - 1 and not p.seg(i + 1).strip() \
                and pi + 1 < len(self.paras) and (m := _CLEFT_NEXT.match(self.paras[pi + 1].text)) \
                and (found := self.cast.lookup(m.group(1))):
            return found, "cleft"  # `"…"` ¶ `It was Phileas Fogg, whose head now emerged from
            # behind his newspapers, who made this remark.`
        if who is None and how == "" and i == 0 and not p.seg(0).strip() and pi \
                and self.paras[pi - 1].chapter == p.chapter and self.paras[pi - 1].quotes:
            if found := self._introduced_after_speech(pi - 1):
                return found, "introduced"
        if who is None and how == "introduced" and i == 0 and (actor := self._actor(pi - 1)):
            return actor, "actor"
        if who is None and how in ("", "introduced") and i == 0 and not p.seg(0).strip() \
                and (other := self._two_alone_next(pi)):
            return other, "alone"
        if who is None and how in ("", "introduced") and i == 0 and not p.seg(0).strip() \
                and not any([*p.after, *p.before]) and (actor := self._beat(pi)) \
                and not self._speaks_of(p, actor, third=False, own=False):
            return actor, "beat-paragraph"  # (`"I shall like Mr. Clark …"` is not Mr. Clark's)
        return who, how

    def _teller(self, pi: int, p, i: int) -> str | None:
        """`“I did not like it. …` ¶ `“‘They aren’t straight,’” answered the other.`: a
        paragraph that goes on with a story left open (the last paragraph's speech did not
        close, or was a tale of TALE_WORDS or more: `"… a beautiful bit of masonry it is."` ¶
        `"'Ay,' said Evans, …"`) by opening with words quoted inside it is the teller's, tags
        and all — the farmer's words are the Scarecrow's telling."""
        q = p.quotes[i]
        if i:
            return p.speakers[0] if p.how[0] == "story" and self._nested(p, q) else None
        if q.start >= 5 or not self._nested(p, q) or (prev := self.last_quoted(pi)) is None \
                or prev.chapter != p.chapter or prev.quotes[-1].closed and prev.how[-1] != "story" \
                and len(prev.quotes[-1].text.split()) < TALE_WORDS:
            return None  # (after a paragraph of the story, the story goes on; so it does after
        return prev.speakers[-1]  # a long speech that ends before the one it tells of speaks)

    @staticmethod
    def _nested(p, q) -> bool:
        """The quotation opens with a quotation of its own (`“‘…` / `'"…`)."""
        inner = "‘'" if p.text[q.start:q.start + 1] in "“\"" else "“\""
        return q.text.lstrip()[:1] in inner

    def _introduced_after_speech(self, pi: int) -> str | None:
        """A speech paragraph whose closing narration introduces the next paragraph's speech
        (`"…" Her voice faded away … at last Miss Lane rose with a sigh, and said:`)."""
        p = self.paras[pi]
        k = len(p.segs) - 1
        seg = re.sub(r":\s*[—–-]+$", ":", p.seg(k).rstrip())  # `and said:—`
        if not seg.endswith(":") or len(seg.split()) < 3:
            return None
        tag = tag_before(seg) or beat(seg)
        return self.resolve(tag, pi, p.segs[k][0] + tag.start) if tag else None

    def resolve(self, tag, pi: int, pos: int) -> str | None:
        subject = " ".join(tag.subject.casefold().split())
        if re.fullmatch(ANAPHOR, subject):
            self.stage = "anaphor"
            return self.anaphor(subject.split()[-1], pi, pos)
        applies, kin = self.relation(subject, pi, pos)
        if applies:
            return kin  # `said her sister`: the one of the scene who fits, not a new "Sister"
        who = super().resolve(tag, pi, pos)
        g = _PRONOUN_GENDER.get(subject)
        if who and g and who in self._listeners(pi, pos):
            self.stage = "listener"  # `"…, Poole," he said` / `she said to Lucy`: not them
            others = self._others(g, pi, who) - self._listeners(pi, pos)
            return others.pop() if len(others) == 1 else None
        if who is None and g and self.stage != "unsure" and (heard := self._listeners(pi, pos)):
            pair = {n for n in self.recent[-2:] if g in self.cast.gender(n)}
            if len(pair) == 2 and len(pair - heard) == 1:
                self.stage = "listener"  # `he observed to the Mole`: the other of the two
                return (pair - heard).pop()
        return who

    def pronoun(self, g: str, pi: int, pos: int) -> str | None:
        if chained := self._chain(g, pi, pos):
            self.stage = "unsure" if chained is UNSURE else "chain"
            return None if chained is UNSURE else chained
        who = super().pronoun(g, pi, pos)
        if who and g == "f" and not self.cast.gender(who) and _described(self.cast, who):
            who = None  # `… as the driver mounted the box.` ¶ `"…," she said`: no driver of hers
        if who and self.stage == "back" and (nearer := self._nearer_antecedent(g, pi, who)):
            who = nearer  # `The testimony of Mary was short; … she was asked …` ¶ `… she replied:`
        if who and self.stage == "back" and self._stranger_since(g, pi, who):
            self.stage = "unsure"
            return None
        if who and self.stage == "back" and pi and not any(q.speech for q in self.paras[pi - 1].quotes) \
                and who not in {n for _, n, _ in self.events[pi - 1]} \
                and not re.search(_GENDER_WORDS[g], blank_quotes(self.paras[pi - 1]), re.I) \
                and self._strangers(self.paras[pi - 1], set()):
            return self._sole_of_sex(g, pi)  # narration between with no `he` or name: `… rose
            # the voice of a lecturer` is no one of the last lines, only the one of that sex there
            # (narration of no one, `A shrill little whistle came from ahead.`, changes nothing)
        if g == "n" and who and "n" not in self.cast.gender(who) \
                and not (self.stage == "subject" and not self.cast.gender(who)):
            return None  # `it said`: a note, a voice — only the subject just named, if no one's sex
        stage = self.stage
        if who is None:
            if stage != "back" or g not in "mf":
                return None
            return self._only_named(g, pi, pos) or self._called_replies(g, pi) or self._sole_of_sex(g, pi) \
                or self._carried(g, pi)
        if stage == "subject":
            return who
        p = self.paras[pi]
        if stage == "mention" and self._pronoun_leads(g, p, pos, who):
            self.stage = "led"
            return self._antecedent(g, pi)
        if self._opens_reply(p, pos) and who == self._last_speaker(pi) \
                and _ANSWER_VERB.search(p.text[max(0, pos - 16):pos + 32]):
            self.stage = "reply"
            others = self._others(g, pi, who)
            if not others:
                return who  # nobody else of that gender near: they go on (Alice alone)
            return others.pop() if len(others) == 1 else None
        return who

    # --- the narration around the tag ----------------------------------------------------

    def _chain(self, g: str, pi: int, pos: int) -> str | None:
        """The main-clause subjects of the paragraph's narration before the tag, last sentence
        first: a pronoun goes on the chain (`The Rat sculled across. Then he held up his paw
        as the Mole stepped down. 'Lean on that!' he said.` → the Rat); the first name or
        description of a fitting gender is the one."""
        p = self.paras[pi]
        text = self._before_tag(p, pos)
        after_speech = False
        if not text.strip() and pi and self.paras[pi - 1].chapter == p.chapter:
            prev = self.paras[pi - 1]
            if not any(q.speech for q in prev.quotes):
                text = blank_quotes(prev)  # `X did so.` ¶ `"…," he asked.`
            elif len((tail := prev.seg(len(prev.segs) - 1)).split()) >= 8 and re.search(r"[.!?]\s*$", tail):
                text, after_speech = tail, True  # `"…," said he. … he nodded.` ¶ `"…," said he`
        found = main_subjects(text, spans=True)
        first = next((s for _, s, _, _ in found if s), "")
        if first.casefold() in ("they", "we") and not self._before_tag(p, pos) and text.strip():
            return UNSURE  # `They found Toad in the garden.` ¶ `"Hooray!" he cried`: which one?
        chained = False
        for at, subject, start, end in found:
            if _PARTITIVE.match(text[start:end]):
                return UNSURE  # `One of them now … turned towards him.` ¶ `"…," he said`
            if (pg := pronoun_gender(subject)) is not None:
                chained |= pg == g
                continue
            if re.fullmatch(ANAPHOR, " ".join(subject.casefold().split())):
                who = self._pair_member(subject, text[:at])
            elif re.search(r"[’']s$", subject) and not _THINGS_OF.match(text, at + len(subject) - 2):
                who = self.cast.lookup(subject[:-2])  # `Anne's white face appeared over the bedclothes`
            else:
                who = self.cast.lookup(subject) if subject else None
            if who is None and not (subject and _PERSON.search(subject)) and at == start \
                    and (not start or text[:start].rstrip()[-1:] in ".!?"):
                # `That evening Mr. Utterson came home`: a sentence's first named subject
                who = next((n for _, _, n, s in self.cast.mentions(text[start:end]) if s), None)
            if who and _GROUP_NAME.match(who):
                continue  # `When the two Musketeers had entered; … when M. de Treville had paced`
            if who and not (gs := self.cast.gender(who)) and g == "f" and _described(self.cast, who):
                continue  # `the driver mounted the box`: a description of no known sex is no `she`
            if who and (fits_gender(g, gs) or (not gs and g != "n")):
                return who  # `it` is an animal the text calls so, never someone of unknown sex
            if who is None and _PERSON.search(subject):
                return UNSURE  # `and the young man resumed. "…," said he`: someone it does not know
            if who is None and self._unknown_name(subject):
                return UNSURE  # `Wills perceptibly shuddered.`: a name the cast does not know
        if chained and not after_speech and (who := self._antecedent_mention(g, text, found)):
            return who  # `… too much for Mr. Jellyband's equanimity. He burst …` ¶ `"…," he said`
        if after_speech and chained:  # only `he` since that speaker's line
            speaker = next((s for s in reversed(self.paras[pi - 1].speakers) if s), None)
            partner = [n for n in self.recent[-2:-1] if n != speaker and g in self.cast.gender(n)]
            if speaker and not partner and fits_gender(g, self.cast.gender(speaker)):
                return speaker  # nobody else of that sex in the exchange: the same one goes on
        return None

    def _unknown_name(self, subject: str) -> bool:
        """A subject that is a name the text writes as one (capitalised inside sentences too,
        never in lower case) and the cast does not know: `Wills perceptibly shuddered.`"""
        words = subject.split()
        checker = self.cast.checker
        return bool(words) and not re.search(r"[’']s$", subject) and not _DETERMINED.match(subject) \
            and not re.fullmatch(TITLES, words[0]) \
            and all(checker.is_name_word(w) for w in words) and checker.mid_cap[words[-1]] > 0 \
            and not checker.lower[words[-1].casefold()]

    def _antecedent_mention(self, g: str, text: str, found) -> str | None:
        """Narration whose only main subjects are `he`/`she` (no name, no one unknown) and
        which names, before its first such pronoun, one character of that sex only — as an
        object or a possessive (`But this was too much for Mr. Jellyband's pleasant
        equanimity. He burst into a fit of laughter.`): that pronoun is them."""
        pronouns = [at for at, s, _, _ in found if pronoun_gender(s) == g]
        if not pronouns or any(s and pronoun_gender(s) != g and (
                re.fullmatch(PRONOUN, s) or _PERSON.search(s) or self.cast.lookup(s))
                for _, s, _, _ in found):
            return None  # `I did, and when I told of Jack Bailey's …, he gave a long whistle.`
        first = min(pronouns)
        mentions = self.cast.mentions(text)
        if any(start >= first and fits_gender(g, self.cast.gender(n)) for start, _, n, _ in mentions):
            return None
        fits = {n for start, _, n, _ in mentions if fits_gender(g, self.cast.gender(n))}
        return fits.pop() if len(fits) == 1 else None

    def _nearer_antecedent(self, g: str, pi: int, who: str) -> str | None:
        """A narration paragraph nearer than the one where the back search found `who` names
        one other character of that sex and goes on with `she`: that character."""
        for k in range(pi - 1, max(-1, pi - LOOKBACK - 1), -1):
            if who in {n for _, n, subject in self.events[k] if subject} or self.paras[k].quotes:
                return None
            text = blank_quotes(self.paras[k])
            if (found := self._antecedent_mention(g, text, main_subjects(text, spans=True))) and found != who:
                return found
        return None

    def _only_named(self, g: str, pi: int, pos: int) -> str | None:
        """`… she found Peter waiting on the stairs.` ¶ `"…?" he asked.`: nobody of that sex is
        a subject near, and the narration just before names one of them only."""
        p = self.paras[pi]
        if self._before_tag(p, pos).strip() or not pi or self.paras[pi - 1].chapter != p.chapter \
                or any(q.speech for q in self.paras[pi - 1].quotes):
            return None
        prev = blank_quotes(self.paras[pi - 1])
        fits = {n for start, end, n, _ in self.cast.mentions(prev) if g in self.cast.gender(n)
                and not re.match(r"[’']s\b", prev[end:])}  # (`my mother's cottage`: not there)
        if len(fits) == 1:
            self.stage = "named"
            return fits.pop()
        return None

    @staticmethod
    def _before_tag(p, pos: int) -> str:
        """The paragraph's narration before a tag, without the tag's own quotation and the
        punctuation between (`"…," he said` at the start of a paragraph has none)."""
        text = blank_quotes(p, pos)
        for q in reversed(p.quotes):
            if q.end <= pos:
                between = p.text[q.end:pos]
                if len(between.split()) <= 2 and not re.search(r"[.!?;]", between):
                    text = text[:q.start]  # `"…," began the latter`: only the tag's verb
                break
        return text if text.strip() else ""

    def _listeners(self, pi: int, pos: int) -> set[str]:
        """Who the tag names as spoken to (`she said to Lucy`) and whom the quotation calls by
        name (`"…, Poole," he said`)."""
        p = self.paras[pi]
        end = next((q.start for q in p.quotes if q.start > pos), len(p.text))
        tail = p.text[pos:end]
        out = listeners(tail, self.cast.mentions(tail))
        if 0 <= self.quote < len(p.quotes):
            out |= self.addressed(p.quotes[self.quote].text)
            if self.quote and is_tag_only(p.seg(self.quote)):  # `"Come, Darcy," said he, "I …"`:
                out |= self.addressed(p.quotes[self.quote - 1].text)  # one speech, one listener
        return out

    def anaphor(self, word: str, pi: int, pos: int) -> str | None:
        """`the other`: in an exchange of two, the one whose turn it is; `the former` / `the
        latter`: of the last two people the narration named together."""
        p = self.paras[pi]
        if word == "other":
            return self.turn(pi, p)
        text = self._before_tag(p, pos)
        if not text.strip() and pi and self.paras[pi - 1].chapter == p.chapter:
            text = blank_quotes(self.paras[pi - 1])
        return self._pair_member(f"the {word}", text)

    def _pair_member(self, anaphor: str, text: str) -> str | None:
        found = sentences(text)
        if not found:
            return None
        start, sentence = found[-1]
        named = former_latter(sentence + " " + anaphor, self.cast.mentions(sentence))
        return named[-1][2] if named else None

    def _alone(self, pi: int, pair: set[str]) -> bool:
        """No other speaker of the text is named in the last few paragraphs (a description,
        `the girl`, may be one of the two)."""
        named = {n for n in self.cast.speakers - pair if n[:1].isupper() and not _described(self.cast, n)}
        for back in range(0, LOOKBACK + 2):
            k = pi - back
            if k < 0 or self.paras[k].chapter != self.paras[pi].chapter:
                break
            if {n for _, n, _ in self.events[k]} & named:
                return False
        return True

    # --- helpers -----------------------------------------------------------------------

    def _narration_before(self, p, pos: int) -> str:
        text = p.text[:pos]
        for q in p.quotes:  # blank the quotations: only the narration counts
            if q.start < pos:
                text = text[:q.start] + " " * (min(q.end, pos) - q.start) + text[min(q.end, pos):]
        return text

    def _pronoun_leads(self, g: str, p, pos: int, who: str) -> bool:
        """The paragraph's narration has `he`/`she` (of gender g) before it names `who`."""
        pron = _SUBJECT_PRONOUN.get(g)
        if not pron:
            return False
        first = min((s for s, name, _ in self.events[self.at(p)] if name == who and s < pos),
                    default=pos)
        return bool(re.search(rf"\b{pron}\b", self._narration_before(p, first), re.I))

    def _antecedent(self, g: str, pi: int) -> str | None:
        if not pi or self.paras[pi - 1].chapter != self.paras[pi].chapter:
            return None
        prev = self.paras[pi - 1]
        fits = {n for n in prev.speakers if n and g in self.cast.gender(n)}
        fits |= {n for _, n, subject in self.events[pi - 1] if subject and g in self.cast.gender(n)}
        return fits.pop() if len(fits) == 1 else None

    @staticmethod
    def _opens_reply(p, pos: int) -> bool:
        """The paragraph opens with a quotation and the tag is right after it."""
        if not p.quotes or p.text[:p.quotes[0].start].strip():
            return False
        return len(p.quotes) == 1 or pos < p.quotes[1].start

    def _last_speaker(self, pi: int) -> str | None:
        if not pi or self.paras[pi - 1].chapter != self.paras[pi].chapter:
            return None
        return next((s for s in reversed(self.paras[pi - 1].speakers) if s), None)

    def _others(self, g: str, pi: int, who: str) -> set[str]:
        """The characters of gender g other than `who` among the last few paragraphs'
        speakers and mentions."""
        names: set[str] = set()
        for back in range(1, LOOKBACK + 2):
            k = pi - back
            if k < 0 or self.paras[k].chapter != self.paras[pi].chapter:
                break
            names |= {n for n in self.paras[k].speakers if n}
            names |= {n for _, n, _ in self.events[k]}
        return {n for n in names - {who} if g in self.cast.gender(n)}


# `"I fetched it," he answered.` after the other's line is the other's answer; `"I'll ask
# her," he said.` or `she complained` after one's own line goes on (measured on the gold sets)
_ANSWER_VERB = re.compile(r"\b(?:answered|replied|returned|retorted|rejoined|responded)\b")


_DESCRIBED_NAME = re.compile(r"(?:[Tt]he|[Hh]is|[Hh]er)\s+[a-z][\w-]*\s+[A-Z]")  # `the unsentimental
# Kennicott` is a description of a name, no alias


def _described(cast, name: str) -> bool:
    """A character the text names only by a description (`the girl`, `the lawyer`)."""
    person = cast.people.get(name)
    return bool(person) and all(re.match(r"(?:[Tt]he|[Aa]n?)\s+[a-z]", f) or f.split()[-1].islower()
                                or f.casefold() in PERSON_NOUNS | cast.nouns for f in person.forms) \
        and not any(_TITLED.match(f) for f in person.forms)


def _proper(cast, name: str) -> bool:
    """A character the text names by a name of their own, not only by a title (`Poole`,
    `Mr. Utterson`; not `the captain`, `Captain`)."""
    person = cast.people.get(name)
    return bool(person) and any(not _TITLED.match(f) and not re.match(r"(?:[Tt]he|[Aa]n?)\s", f)
                                and f.casefold() not in PERSON_NOUNS | cast.nouns
                                for f in person.forms)


def attribute_dialogue(
    paragraphs: list[tuple[int, str, str | None]],
) -> tuple[list[Draft], dict[str, list[str]]]:
    """Paragraphs (line, text, chapter) of prose → drafts and {character: aliases}."""
    text = "\n\n".join(t for _, t, _ in paragraphs)
    paras = _read(paragraphs, quote_style(text))
    mark_written(paras)
    checker = NameChecker(text)
    narrator, forms = find_narrator(paras, checker)
    cast = Cast(paras, checker, narrator, forms)
    resolver = StrictResolver(paras, cast, narrator)
    resolver.run()
    merges = {d: n for d, n in resolver.slot_merges(_described).items() if _proper(cast, n)
              and resolver._elder(n, d.split()[-1].casefold())}  # `Mother` is no `Kitty`
    if merges:  # `replied the servant` where Poole's turn was (not `the boy` into `the captain`)
        paras = _read(paragraphs, quote_style(text))
        mark_written(paras)
        cast = Cast(paras, checker, narrator, forms, merges)
        resolver = StrictResolver(paras, cast, narrator)
        resolver.run()
    fill_between(paras, cast)
    check_turns(paras, cast)
    solve_exchanges(paras, cast)
    check_counts(paras, cast)
    drafts = all_drafts(paras, resolver.tags)
    spoken = {d.character for d in drafts}
    aliases = {person.name: sorted(f for f in person.forms if _fold(f) != _fold(person.name)
                                   and not _bare_title(f) and not _DESCRIBED_NAME.match(f))
               for person in cast.people.values() if person.name in spoken}
    if narrator == NARRATOR and NARRATOR in spoken:
        aliases.setdefault(NARRATOR, [])
    return drafts, {k: v for k, v in aliases.items() if v}
