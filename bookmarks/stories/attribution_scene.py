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
Where a rule does not fit, the other rules decide.
"""

from __future__ import annotations

import re

from bookmarks.stories.attribute import _PRONOUNS, fits_gender
from bookmarks.stories.dialogue import self_naming
from bookmarks.stories.speakers import gender_from_name
from bookmarks.stories.tags import VERB

_GOES_ON = re.compile(r"\b(?:went\s+on|goes\s+on|continued|continues|added|adds|resumed|pursued|proceeded)\b")
_REPORTED = re.compile(rf"\b(?:{VERB}|(?:was|were)\s+(?:positive|sure|certain|confident))\b")
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
        return super().resolve(tag, pi, pos)

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

    def update_exchange(self, p, speech: list[int]) -> None:
        super().update_exchange(p, speech)
        pi = self.paras.index(p)
        said = [s for s in p.speakers if s]
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
