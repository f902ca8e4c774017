"""Who speaks in a room of several people, as a reader follows the talk (mixed into
`attribution_rules.StrictResolver` before the other rules):

- **A speaker who names themselves** (`"My name is Clifford Wentworth, ma'am," he said`) is
  that one, whatever the pronoun or the turn would give.
- **Going on.** `she went on`, `he added`, `she continued` is the one who spoke before in the
  same paragraph, when of that sex, whoever the narration between names.
- **The one called answers.** A reply that opens its paragraph and is tagged only by a
  pronoun or a description (`"…," said the young man`) right after a line that called one
  person by name (`"Why didn't you come out to meet me, Mr. Clifford Wentworth?"`) is that
  person's, when they fit the tag.
- **An answer makes an exchange.** When B answers A's question (a line ending in `?`) in
  the next paragraph, the two are talking: an untagged line after B's is A's, even when
  others spoke before A.
- **Two in the room.** The narration paragraph that opens a talk says who is there: the
  subjects of its main clauses (`Mrs. Gibson came home … she seemed unable to attend to
  Molly's questions`). When they are two, and one of them has spoken, an untagged line
  after theirs is the other's; a first line that calls one of them by name is the other's.
  Anyone else the narration makes a subject (`the maid`, a third name) and the rule abstains.
- **The one who opens the talk.** With no talk running, an untagged line right after a
  narration paragraph is the one its last clause is about (`… and she, in her turn, was
  astonished at Molly's bonnet.` ¶ `"Where are you going so early, child?"`), unless that
  sentence reports speech or the line names them (`"I'm afraid Molly isn't grateful"` is
  not Molly's).
- **The one man in the room.** A `he` (`she`) the text gives no one for is the one man
  (woman) the narration that opened the talk makes a subject (`Mr. Preston was announced …
  Mrs. Gibson and she were sitting together`), when that narration names someone.
- **Newcomers.** A speech paragraph whose narration brings in someone the last paragraphs
  did not name (`"Here she is!" she cried. Her father was walking up with a tall young
  lady.`) ends the exchange: only its speaker is left in it.
Where a rule does not fit, the other rules decide.
"""

from __future__ import annotations

import re

from bookmarks.stories.attribute import _PRONOUNS, LOOKBACK, fits_gender
from bookmarks.stories.attribution_context import blank_quotes, main_subjects, pronoun_gender, sentences
from bookmarks.stories.attribution_turns import BRIDGE_WORDS
from bookmarks.stories.dialogue import self_naming
from bookmarks.stories.speakers import gender_from_name
from bookmarks.stories.tags import PERSON_NOUNS, VERB

_GOES_ON = re.compile(r"\b(?:went\s+on|goes\s+on|continued|continues|added|adds|resumed|pursued|proceeded)\b")
_REPORTED = re.compile(rf"\b(?:{VERB}|(?:was|were)\s+(?:positive|sure|certain|confident))\b")
_PERSON_WORD = re.compile(rf"\b(?:{'|'.join(sorted(PERSON_NOUNS))})s?$|^(?:[Ss]ome|[Nn]o)(?:one|body)$")
_QUESTION = re.compile(r"(?:Was|Were|Is|Are|Did|Does|Do|Had|Has|Have|Could|Would|Should|Will|Can|Might)\s")
_DESCRIPTION = re.compile(r"(?:the|a|an|this|that)\s+(?:[a-z-]+\s+){0,2}[a-z]+$")


class SceneRules:
    def explicit(self, pi: int, p, i: int) -> str | None:
        who = super().explicit(pi, p, i)
        q = p.quotes[i]
        if q.speech and (said := self_naming(q.text)) and (me := self.cast.lookup(said)) and me != who:
            tag = p.after[i] or p.before[i]
            g = _PRONOUNS.get(tag.subject.casefold()) if tag else None
            if tag is None or g and (fits_gender(g, self.cast.gender(me)) or not self.cast.gender(me)):
                p.how[i] = "self-named"
                return me
        return who

    def resolve(self, tag, pi: int, pos: int) -> str | None:
        subject = " ".join(tag.subject.split())
        g = _PRONOUNS.get(subject.casefold())
        if g and (same := self._goes_on(tag, pi, pos, g)):
            self.stage = "goes-on"
            return same
        if g or _DESCRIPTION.fullmatch(subject):
            if called := self._called_reply(subject, g, pi, pos):
                self.stage = "called"
                return called
        who = super().resolve(tag, pi, pos)
        if who is None and g in ("m", "f") and self.stage == "back" \
                and (people := self._participants(pi, opening=True, named=True)):
            fits = {n for n in people if g in self.cast.gender(n)}
            if len(fits) == 1:
                self.stage = "room"  # `"…," said he, bowing to Molly`: the one man in the room
                return fits.pop()
        return who

    def _goes_on(self, tag, pi: int, pos: int, g: str) -> str | None:
        """`"In some people," the Baroness declared. … she took hold of her hand. "And you, …?"
        she went on`: the Baroness."""
        p = self.paras[pi]
        end = pos - tag.start + tag.end
        if not _GOES_ON.search(p.text[max(0, pos - 24):end + 1]):
            return None
        earlier = [(q, s) for q, s in zip(p.quotes, p.speakers, strict=True) if s and q.end <= pos]
        if not earlier or not fits_gender(g, self.cast.gender(earlier[-1][1])):
            return None
        between = p.text[earlier[-1][0].end:pos]
        if _REPORTED.search(between):
            return None  # `But Poole was positive nothing had come; "and only circulars," he added`
        return earlier[-1][1]

    def _called_reply(self, subject: str, g: str | None, pi: int, pos: int) -> str | None:
        """The one the line before called by name, for a reply tagged `he` / `the young man`."""
        p = self.paras[pi]
        if not pi or self.paras[pi - 1].chapter != p.chapter or not self._opens_reply(p, pos):
            return None
        prev = self.paras[pi - 1]
        last = next((s for s in reversed(prev.speakers) if s), None)
        spoken = [q for q, s in zip(prev.quotes, prev.speakers, strict=True) if s == last and q.speech]
        if not last or not spoken:
            return None
        called = self.addressed(spoken[-1].text) - {last}
        if len(called) != 1:
            return None
        who = called.pop()
        want = g or gender_from_name(subject)
        genders = self.cast.gender(who)
        if want and genders and not fits_gender(want, genders):
            return None
        return who

    def turn(self, pi: int, p) -> str | None:
        return super().turn(pi, p) or self._pair_turn(pi, p)

    # --- who is in the room ---------------------------------------------------------------

    def _participants(self, pi: int, opening: bool = False, named: bool = False) -> set[str] | None:
        """The people of the talk paragraph pi is in: the main-clause subjects of the
        narration paragraph that opened it and the speakers since; None when that
        narration is too far back or makes a subject of someone the rules cannot name.
        `opening`: the talk may have begun in paragraph pi itself; `named`: that narration
        must name someone."""
        chapter, speakers, k = self.paras[pi].chapter, set(), pi - (0 if opening else 1)
        while k >= 0 and self.paras[k].chapter == chapter and any(q.speech for q in self.paras[k].quotes):
            speakers |= {s for s in self.paras[k].speakers if s}
            k -= 1
        while k > 0 and len(self.paras[k].text.split()) <= BRIDGE_WORDS and not self._subjects_of(k) \
                and self.paras[k - 1].chapter == chapter and not self.paras[k - 1].quotes:
            k -= 1  # `At length they were seated, and conversation began.`: the paragraph before says who
        if k < 0 or self.paras[k].chapter != chapter or pi - k > 6:
            return None
        if k and any(q.speech for q in self.paras[k - 1].quotes) \
                and len(self.paras[k].text.split()) <= BRIDGE_WORDS:
            return None  # only a bridge in a talk already running: `Just then the servant entered.`
        people = self._subjects_of(k)
        if people is None or named and not people:
            return None
        people |= speakers
        if any(self._newcomers(blank_quotes(self.paras[j]), people) for j in range(k + 1, pi)):
            return None  # someone came in since: `"Here it is!" Her father walked up with a lady.`
        return people

    def _subjects_of(self, k: int) -> set[str] | None:
        people = self._scene_subjects(k)
        return None if people is None else {n for _, n in people}

    def _scene_subjects(self, k: int) -> list[tuple[int, str]] | None:
        """(where, who) for each main clause of a narration paragraph that is about someone,
        in order: a name (`Molly's spirits` are Molly's), or `she` for the last one of that
        sex named so before it; None when a subject is someone the rules cannot name (`the
        maid came in`) or a `she` no name comes before. A question (`Was Cynthia coming?`)
        is about nobody present."""
        out: list[tuple[int, str]] = []
        for at, subject in reversed(main_subjects(blank_quotes(self.paras[k]))):
            if (g := pronoun_gender(subject)) in ("m", "f"):
                fits = [n for _, n in out if g in self.cast.gender(n)]
                if not fits:
                    return None
                out.append((at, fits[-1]))
                continue
            if g or _QUESTION.match(subject):
                continue
            for one in re.split(r"\s+and\s+", subject):  # `Mrs. Gibson and she were sitting`
                who = self.cast.lookup(re.sub(r"[’']s$", "", one))
                if who:
                    out.append((at, who))
                elif _PERSON_WORD.search(one):
                    return None  # `the maid came in`, `A young man stood there`: someone unnamed
        return out

    def _about(self, pi: int) -> set[str]:
        """Everyone the last few paragraphs' narration names."""
        return {n for k in range(max(0, pi - LOOKBACK), pi) if self.paras[k].chapter == self.paras[pi].chapter
                for _, n, _ in self.events[k]}

    def _newcomers(self, text: str, pair: set[str]) -> bool:
        """Whether narration makes a subject of someone not in `pair` (a name, `her father`,
        `a tall young lady`)."""
        for _, subject in main_subjects(text):
            if pronoun_gender(subject) or _QUESTION.match(subject):
                continue
            who = self.cast.lookup(re.sub(r"[’']s$", "", subject))
            if who and who not in pair or not who and _PERSON_WORD.search(subject):
                return True
        return False

    def _pair_turn(self, pi: int, p) -> str | None:
        """Two in the room: the other of the two, after one of them spoke (or when the line
        calls one of them by name)."""
        if any(p.after) or any(p.before) or not (people := self._participants(pi)) or len(people) != 2:
            return None
        called = set().union(*(self.addressed(q.text) for q in p.quotes if q.speech))
        last = next((s for s in reversed(self.paras[pi - 1].speakers) if s), None) if pi else None
        if called:
            who = (people - called).pop() if len(called & people) == 1 and len(called) == 1 else None
        elif last in people and set(self.recent[-2:]) <= people:
            who = (people - {last}).pop()
        else:
            return None
        return None if who is None or self._spoken_of(who, p) else who

    def _opener(self, pi: int) -> str | None:
        """With no talk running, the one the last clause of narration paragraph pi is about."""
        p = self.paras[pi]
        if self.recent or any(q.speech for q in p.quotes) or pi + 1 >= len(self.paras) \
                or pi and any(self.paras[pi - 1].speakers) and len(p.text.split()) <= BRIDGE_WORDS:
            return None  # a talk is running, or this is a bridge in it
        text = blank_quotes(p)
        found = main_subjects(text)
        last = sentences(text)[-1][0] if text.strip() else 0
        if not found or re.search(rf"\b{VERB}\b", text[last:]):
            return None  # `Lucy said that this was kind`: she has spoken
        people = self._scene_subjects(pi)  # `she`: the last one of that sex named before
        who = people[-1][1] if people and people[-1][0] == found[0][0] else None
        if not who or self._spoken_of(who, self.paras[pi + 1]):
            return None
        return who

    def _spoken_of(self, who: str, p) -> bool:
        """Whether the paragraph's speech names `who`, calling them or talking of them (`"I'm
        afraid Molly isn't grateful"` is not Molly's)."""
        return any(n == who for q in p.quotes if q.speech for _, _, n, _ in self.cast.mentions(q.text))

    def update_exchange(self, p, speech: list[int]) -> None:
        super().update_exchange(p, speech)
        pi = self.paras.index(p)
        said = [s for s in p.speakers if s]
        known = self._about(pi) | set(self.recent)
        if said and p.quotes and self._newcomers(p.text[p.quotes[-1].end:], known):
            self.recent = [said[-1]]  # `"…!" she cried. Her father was walking up with a young lady`
        if len(set(said)) != 1 or not pi or self.paras[pi - 1].chapter != p.chapter \
                or not p.quotes or p.text[:p.quotes[0].start].strip():
            return
        prev = self.paras[pi - 1]
        asked = [(q, s) for q, s in zip(prev.quotes, prev.speakers, strict=True) if s and q.speech]
        r = self.recent
        if asked and asked[-1][1] != said[0] and asked[-1][0].text.rstrip(" _’'”\"").endswith("?") \
                and len(r) > 2 and r[-2:] == [asked[-1][1], said[0]] \
                and not (r[-3] == r[-1] or len(r) >= 4 and r[-4] == r[-2]):  # no one central speaker
            self.recent = [asked[-1][1], said[0]]  # B answered A's question: those two talk
