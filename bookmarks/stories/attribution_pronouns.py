"""Where a `he`/`she` tag's own search finds no one (mixed into
`attribution_rules.StrictResolver`):

- **Carried back.** Every paragraph since the last woman named speaks of her as `she`/`her`
  (or holds lines only): `she` is still her — not over someone the cast does not know, nor
  after a `she said` no one was given, nor through an `[Illustration]` caption.
- **A stranger since.** Someone the cast does not know has been a main subject since the
  one the search found: `he` may be them, and the rules stay unsure.
"""

from __future__ import annotations

import re

from bookmarks.stories.attribute import LOOKBACK
from bookmarks.stories.attribution_context import blank_quotes, main_subjects
from bookmarks.stories.attribution_scene import _PERSON, _UNNAMED

_GENDER_WORDS = {"m": r"\b(?:he|him|his|himself)\b", "f": r"\b(?:she|her|hers|herself)\b",
                 "n": r"\b(?:it|its|itself)\b"}
# `Sarah's window` is a thing of hers, not she (`Aunt Ann's eyes rested on him` is she)
_THINGS_OF = re.compile(r"[’']s\b(?!\s+(?:[a-z]+\s+)?(?:eyes|face|voice|lips|hands?|head|glance|gaze|look|"
                        r"smile|mouth|cheeks)\b)")  # (`Anne's white face appeared`: she did)
CARRY = 8  # paragraphs a `she` may be carried back over to the last woman named


class PronounRules:
    def _carried(self, g: str, pi: int) -> str | None:
        """`"…," she said.` ¶ `She turned, and pointed back …` ¶ `"I heard you," she said`:
        further back than the pronoun's own search, every paragraph since the last one who
        fits spoke or was named speaks of her as `she`/`her` and names no one else of that
        sex, nor anyone the cast does not know."""
        for back in range(1, CARRY + 1):
            k = pi - back
            if k < 0 or self.paras[k].chapter != self.paras[pi].chapter:
                return None
            para = self.paras[k]
            if para.text.lstrip().startswith("["):
                continue  # `[Illustration: …]`, `[Copyright 1894 by George Allen.]`: no one there
            text = blank_quotes(para)
            if any(self.cast.lookup(re.sub(r"^(?:[Tt]his|[Tt]hat)\s", "the ", m.group(0))) is None
                   for m in _UNNAMED[g].finditer(text)) \
                    or self._unplaced(k, g):
                return None  # (`a maid came in`: she may be the maid; a `he said` no one was given)
            fits = {n for _, n, _ in self.events[k] if g in self.cast.gender(n)}
            if fits:
                if len(fits) == 1 and (back > LOOKBACK or self._named_just_before(g, k, pi, text, fits)):
                    self.stage = "carried"
                    return fits.pop()
                return None
            if not re.search(_GENDER_WORDS[g], text, re.I) and not any(para.speakers):
                return None
        return None

    def _named_just_before(self, g: str, k: int, pi: int, text: str, fits: set[str]) -> bool:
        """Within the pronoun's own reach, where its search wants a subject: the one of that
        sex paragraph k names, even as an object, when only lines came since and no `she said`
        went unplaced just before (`… turned towards Carrie.` ¶ `"…?" he asked` ¶ `"…," she`)
        — but not a thing of hers (`Sarah's window`)."""
        if not all(any(q.speech for q in self.paras[j].quotes) for j in range(k + 1, pi)) \
                or any(self._unplaced(j, g) for j in range(max(0, k - 2), k)):
            return False
        named = {n for _, end, n, _ in self.cast.mentions(text)
                 if g in self.cast.gender(n) and not _THINGS_OF.match(text, end)}
        return named == fits

    def _unplaced(self, k: int, g: str) -> bool:
        """Paragraph k has a `he said` (of sex g) that no one was given: someone unknown talks."""
        word = {"m": "he", "f": "she"}.get(g, "it")
        return any(s is None and t is not None and t.subject.casefold() == word
                   for t, s in zip(self.tags[k], self.paras[k].speakers, strict=True))

    def _stranger_since(self, g: str, pi: int, who: str) -> bool:
        """Someone the cast does not know (`The old boy shook hands with me, …`, `the uncle
        came in`) is a main subject of the narration since `who` was: `he` may be them."""
        for back in range(1, LOOKBACK + 1):
            k = pi - back
            if k < 0 or self.paras[k].chapter != self.paras[pi].chapter:
                return False
            for _, subject in main_subjects(blank_quotes(self.paras[k])):
                if _PERSON.search(subject) and self.cast.lookup(subject) is None \
                        and not re.search(_GENDER_WORDS["f" if g == "m" else "m"], subject, re.I):
                    return True
            if who in {n for _, n, subj in self.events[k] if subj}:
                return False
        return False
