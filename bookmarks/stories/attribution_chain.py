"""Who a `he`/`she` tag is, from the narration around it (mixed into
`attribution_rules.StrictResolver`, whose `pronoun` asks these first):

- **The chain.** The main-clause subjects of the paragraph's narration before the tag, last
  sentence first: a pronoun goes on the chain, the first name or description of a fitting
  gender is the one; someone the cast does not know, a partitive (`one of them`) or a
  group stops it unsure.
- **The antecedent.** Where the narration's `he` leads and names someone after it, the one
  it continues from the paragraph before; the nearer antecedent, the only one named.
- **Listeners and pairs.** Those the tag or the lines speak to are not the speaker; `the
  other`, `the former`, `the latter` of a pair.
- **A reply.** The last speaker, and the others of that gender near, for a reply tagged
  `he answered` right after someone's line.

Characters the text names only by a description (`is_described`) and those with a name of
their own (`has_proper_name`) are told apart here too.
"""

from __future__ import annotations

import re

from bookmarks.stories.attribute import LOOKBACK, fits_gender
from bookmarks.stories.attribution_context import (
    blank_quotes,
    former_latter,
    listeners,
    main_subjects,
    pronoun_gender,
    sentences,
)
from bookmarks.stories.attribution_pronouns import _THINGS_OF
from bookmarks.stories.attribution_scene import _PERSON
from bookmarks.stories.speakers import GROUP_NUMBERS
from bookmarks.stories.tags import ANAPHOR, PERSON_NOUNS, PRONOUN, TITLES, is_tag_only

_SUBJECT_PRONOUN = {"m": "he", "f": "she"}
_DETERMINED = re.compile(r"(?:The|A|An|This|That|Each|One)\s")
_GROUP_NAME = re.compile(rf"(?:[Tt]he\s+)?(?:{GROUP_NUMBERS})\s", re.I)  # `The two Musketeers`
UNSURE = "\0unsure"  # the chain met someone the cast does not know: no guess
_TITLED = re.compile(r"(?:the\s+)?(?:king|queen|prince|princess|duke|duchess|captain|doctor|count|"
                     r"countess|baron|baroness|colonel|major|general|professor|judge|inspector|"
                     r"sergeant|lieutenant|master|mistress)$", re.I)  # a title: maybe anyone so titled

# a clause whose subject is one of several, unnamed: `One of them`, `the younger of the two`
_PARTITIVE = re.compile(r"[\s,;:—–-]*(?:(?:and|but|then|now|at\s+last)\s+)?(?:one|each|either|neither|"
                        r"(?:the\s+)?(?:elder|younger|older|taller|shorter|first|second|last))\s+of\s+"
                        r"(?:them|these|those|the\s+(?:\w+\s+)?\w+)\b", re.I)


class ChainRules:
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
            if who and not (gs := self.cast.gender(who)) and g == "f" and is_described(self.cast, who):
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
        named = {n for n in self.cast.speakers - pair if n[:1].isupper() and not is_described(self.cast, n)}
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


def is_described(cast, name: str) -> bool:
    """A character the text names only by a description (`the girl`, `the lawyer`)."""
    person = cast.people.get(name)
    return bool(person) and all(re.match(r"(?:[Tt]he|[Aa]n?)\s+[a-z]", f) or f.split()[-1].islower()
                                or f.casefold() in PERSON_NOUNS | cast.nouns for f in person.forms) \
        and not any(_TITLED.match(f) for f in person.forms)


def has_proper_name(cast, name: str) -> bool:
    """A character the text names by a name of their own, not only by a title (`Poole`,
    `Mr. Utterson`; not `the captain`, `Captain`)."""
    person = cast.people.get(name)
    return bool(person) and any(not _TITLED.match(f) and not re.match(r"(?:[Tt]he|[Aa]n?)\s", f)
                                and f.casefold() not in PERSON_NOUNS | cast.nouns
                                for f in person.forms)
