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
Where a rule is unsure it abstains: the line stays narration. What the narration around a
`he`/`she` tag says of who it is lives in `attribution_chain`.
"""

from __future__ import annotations

import re

from bookmarks.stories.attribute import Draft, Resolver, _bare_title, _fold, all_drafts
from bookmarks.stories.attribution_calls import CallRules
from bookmarks.stories.attribution_chain import UNSURE, ChainRules, has_proper_name, is_described
from bookmarks.stories.attribution_context import blank_quotes, mark_written
from bookmarks.stories.attribution_exchange import check_counts, check_turns, solve_exchanges
from bookmarks.stories.attribution_pronouns import _GENDER_WORDS, PronounRules
from bookmarks.stories.attribution_relations import RelationRules
from bookmarks.stories.attribution_scene import SceneRules
from bookmarks.stories.attribution_shared import place_shared
from bookmarks.stories.attribution_turns import TurnRules, fill_between
from bookmarks.stories.dialogue import NARRATOR, Cast, _read, find_narrator
from bookmarks.stories.quotes import quote_style
from bookmarks.stories.speakers import NameChecker
from bookmarks.stories.tags import ANAPHOR, PROPER, beat, tag_before

__all__ = ["Draft", "StrictResolver", "attribute_dialogue"]

_PRONOUN_GENDER = {"he": "m", "she": "f", "it": "n"}

_CLEFT = re.compile(rf"\s*It\s+was\s+((?:the\s+)?{PROPER}|the\s+[a-z]+)(?=[\s,.;:!?—–-])")


_CLEFT_NEXT = re.compile(rf"\s*It\s+was\s+((?:the\s+)?{PROPER}|the\s+[a-z]+)(?:,[^,;.!?]{{0,100}},)?\s+who\s+"
                         r"(?:had\s+)?(?:made|spoke|said|uttered|asked|put|added|answered|replied)\b")


TALE_WORDS = 80  # a speech this long may be a tale that the next paragraph goes on with


class StrictResolver(ChainRules, CallRules, PronounRules, RelationRules, SceneRules, TurnRules, Resolver):
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
        if who and g == "f" and not self.cast.gender(who) and is_described(self.cast, who):
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

# `"I fetched it," he answered.` after the other's line is the other's answer; `"I'll ask
# her," he said.` or `she complained` after one's own line goes on (measured on the gold sets)
_ANSWER_VERB = re.compile(r"\b(?:answered|replied|returned|retorted|rejoined|responded)\b")


_DESCRIBED_NAME = re.compile(r"(?:[Tt]he|[Hh]is|[Hh]er)\s+[a-z][\w-]*\s+[A-Z]")  # `the unsentimental
# Kennicott` is a description of a name, no alias



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
    merges = {d: n for d, n in resolver.slot_merges(is_described).items() if has_proper_name(cast, n)
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
    place_shared(paras, cast)
    drafts = all_drafts(paras, resolver.tags)
    spoken = {d.character for d in drafts}
    aliases = {person.name: sorted(f for f in person.forms if _fold(f) != _fold(person.name)
                                   and not _bare_title(f) and not _DESCRIBED_NAME.match(f))
               for person in cast.people.values() if person.name in spoken}
    if narrator == NARRATOR and NARRATOR in spoken:
        aliases.setdefault(NARRATOR, [])
    elif narrator and narrator in spoken:  # `Watson`, who tells the story: the narrator (presence
        aliases.setdefault(narrator, []).append(NARRATOR)  # puts them where the narration says I)
    return drafts, {k: v for k, v in aliases.items() if v}
