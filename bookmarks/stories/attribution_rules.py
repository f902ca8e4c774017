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

from bookmarks.stories.attribute import LOOKBACK, Draft, Resolver, _bare_title, _fold, drafts_of
from bookmarks.stories.dialogue import NARRATOR, Cast, _read, find_narrator
from bookmarks.stories.quotes import quote_style
from bookmarks.stories.speakers import NameChecker

__all__ = ["Draft", "StrictResolver", "attribute_dialogue"]

_SUBJECT_PRONOUN = {"m": "he", "f": "she"}


class StrictResolver(Resolver):
    def pronoun(self, g: str, pi: int, pos: int) -> str | None:
        who = super().pronoun(g, pi, pos)
        stage = self.stage
        if who is None or stage == "subject":
            return who
        p = self.paras[pi]
        if stage == "mention" and self._pronoun_leads(g, p, pos, who):
            self.stage = "led"
            return self._antecedent(g, pi)
        if self._opens_reply(p, pos) and who == self._last_speaker(pi):
            self.stage = "reply"
            others = self._others(g, pi, who)
            if not others:
                return who  # nobody else of that gender near: they go on (Alice alone)
            return others.pop() if len(others) == 1 else None
        return who

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
        first = min((s for s, name, _ in self.events[self.paras.index(p)] if name == who and s < pos),
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

    # --- vocatives -----------------------------------------------------------------------

    def turn(self, pi: int, p) -> str | None:
        if who := super().turn(pi, p):
            return who
        return self.vocative(pi, p)

    def vocative(self, pi: int, p) -> str | None:
        """An untagged line addressing X by name, right after an exchange of X and one
        other speaker (nobody else named in between), is the other's."""
        if any(p.after) or any(p.before):
            return None
        addressed = set().union(*(self.addressed(q.text) for q in p.quotes if q.speech))
        if len(addressed) != 1 or not pi:
            return None
        listener = next(iter(addressed))
        spoke: list[str] = []
        for back in range(1, LOOKBACK + 2):
            k = pi - back
            if k < 0 or self.paras[k].chapter != p.chapter:
                break
            for n in reversed(self.paras[k].speakers):
                if n and n not in spoke:
                    spoke.append(n)
        narration = " ".join(p.seg(k) for k in range(len(p.segs)))
        if {n for _, _, n, _ in self.cast.mentions(narration)} - {listener}:
            return None
        if len(spoke) >= 2 and spoke[0] == listener:  # a reply to the one who just spoke
            return spoke[1]
        return None  # `"Nell, …"` right after Tom: Tom again, or someone new; unsure


def attribute_dialogue(
    paragraphs: list[tuple[int, str, str | None]],
) -> tuple[list[Draft], dict[str, list[str]]]:
    """Paragraphs (line, text, chapter) of prose → drafts and {character: aliases}."""
    text = "\n\n".join(t for _, t, _ in paragraphs)
    paras = _read(paragraphs, quote_style(text))
    checker = NameChecker(text)
    narrator, forms = find_narrator(paras, checker)
    cast = Cast(paras, checker, narrator, forms)
    resolver = StrictResolver(paras, cast, narrator)
    resolver.run()
    drafts = [d for pi, p in enumerate(paras) for d in drafts_of(p, resolver.tags[pi])]
    spoken = {d.character for d in drafts}
    aliases = {person.name: sorted(f for f in person.forms if _fold(f) != _fold(person.name)
                                   and not _bare_title(f))
               for person in cast.people.values() if person.name in spoken}
    if narrator == NARRATOR and NARRATOR in spoken:
        aliases.setdefault(NARRATOR, [])
    return drafts, {k: v for k, v in aliases.items() if v}
