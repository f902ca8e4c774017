"""A tag that names its speaker by a relation (`said her sister`, `replied his friend`,
`cried her mother`), for the stricter speaker rules (mixed into
`attribution_rules.StrictResolver`).

A reader does not meet a new character called "Sister" there: `her` is someone in the
scene, and the sister is another one of it, of the relation's sex. So the tag is the one
person of the scene that fits: among the last speakers, the people the line before called
by name and the people the narration around names, not the possessor (the last one of the
pronoun's sex to speak or act) and of the relation's sex. With nobody named about who fits,
the description stays a character of its own (a mother the text never names); with two or
more who fit, the line stays narration.
"""

from __future__ import annotations

import re

from bookmarks.stories.attribute import fits_gender

_RELATION_GENDER = {
    **dict.fromkeys("sister mother daughter wife lady aunt niece grandmother mistress".split(), "f"),
    **dict.fromkeys("brother father son husband uncle nephew grandfather master".split(), "m"),
    **dict.fromkeys("friend companion cousin guest visitor host hostess".split(), ""),
}
_RELATION = re.compile(r"(?P<own>his|her|their)\s+(?:[a-z]+\s+)?(?P<rel>" +
                       "|".join(sorted(_RELATION_GENDER, key=len, reverse=True)) + r")")
_OWN_GENDER = {"his": "m", "her": "f", "their": ""}
_MARRIED_WOMAN = r"(?:Mrs\.?|Lady|Madame|Mme\.?|Mother|Mamma|Mama|Aunt|Dame)\s|(?:Mother|Mamma|Mama)$"
_MAN_OF_STANDING = (r"(?:Mr\.?|Sir|Lord|Father|Papa|Dr\.?|Doctor|Captain|Colonel|Major|General|Squire|"
                    r"Uncle|Professor)\s|(?:Father|Papa)$")
_ELDER = {"mother": _MARRIED_WOMAN, "wife": _MARRIED_WOMAN, "lady": _MARRIED_WOMAN, "aunt": _MARRIED_WOMAN,
          "father": _MAN_OF_STANDING, "husband": _MAN_OF_STANDING, "uncle": _MAN_OF_STANDING}


class RelationRules:
    def relation(self, subject: str, pi: int, pos: int) -> tuple[bool, str | None]:
        """(applies, who) for a relation tag: `who` is None when the scene has several who fit."""
        m = _RELATION.fullmatch(" ".join(subject.split()))
        if not m:
            return False, None
        cache = self.__dict__.setdefault("_relations", {})
        if (pi, pos) not in cache:  # both halves of `"…," said her sister, "…"` alike
            cache[(pi, pos)] = self._relation(m.group("own"), m.group("rel"), pi, pos)
        applies, who = cache[(pi, pos)]
        if applies:
            self.stage = "relation"
        return applies, who

    def _relation(self, own: str, rel: str, pi: int, pos: int) -> tuple[bool, str | None]:
        want = _RELATION_GENDER[rel] or {"hostess": "f", "host": "m"}.get(rel, "")
        owner = self._possessor(_OWN_GENDER[own], pi, pos)
        if owner and rel in ("wife", "lady", "husband") and (spouse := self._spouse(owner, rel)):
            return True, spouse  # `"…, Mr. Grey?" said his wife`: Mrs. Grey
        if owner and rel in ("mother", "father") and (parent := self._parent(owner, rel)):
            return True, parent  # Harriet Grey's mother is Mrs. Grey
        scene = self._scene(pi, pos) - {owner}
        fits = {n for n in scene
                if (not want or fits_gender(want, self.cast.gender(n))) and self._elder(n, rel)}
        if not fits:
            # `cried her sister` with a named sister speaking elsewhere in the chapter: unsure;
            # `said her father` where one titled man has spoken in the chapter: him
            elders = {n for n in self._chapter_speakers(pi, want) - {owner} if self._elder(n, rel)}
            if rel in _ELDER and want and len(elders) == 1:
                return True, elders.pop()
            return bool(elders), None
        return True, (fits.pop() if len(fits) == 1 else None)

    def _elder(self, name: str, rel: str) -> bool:
        """A parent or a spouse is named with a title (`Mrs. Grey`, `Sir John`), not a girl's
        first name (`Maria` is nobody's mother here); other relations fit anyone."""
        if rel not in _ELDER:
            return True
        person = self.cast.people.get(name)
        return any(re.match(_ELDER[rel], f) for f in (person.forms if person else {name}))

    def _spouse(self, owner: str, rel: str) -> str | None:
        """Mr. X's wife is Mrs. X, Mrs. X's husband Mr. X, when the text names them so (by any
        of their forms: Alfred Inglethorp is Mr. Inglethorp)."""
        person = self.cast.people.get(owner)
        for form in sorted(person.forms | {owner} if person else {owner}):
            m = re.match(r"(Mrs?)\.?\s+(.+)$", form)
            if m and (m.group(1) == "Mrs") == (rel == "husband"):
                found = self.cast.lookup(f"{'Mr' if rel == 'husband' else 'Mrs'}. {m.group(2)}")
                if found and found != owner:
                    return found
        return None

    def _parent(self, owner: str, rel: str) -> str | None:
        """Mrs. X (Mr. X) for the mother (father) of someone the text names X: `Harriet Grey`,
        `Miss Harriet Grey`, `Miss Grey`."""
        person = self.cast.people.get(owner)
        surnames = set()
        for form in (person.forms if person else {owner}):
            words = form.replace(".", "").split()
            if len(words) >= 2 and words[-1][:1].isupper() and words[0] not in ("Mr", "Mrs", "Sir", "Lord"):
                surnames.add(words[-1])
        if len(surnames) != 1:
            return None
        who = self.cast.lookup(f"{'Mrs' if rel == 'mother' else 'Mr'}. {surnames.pop()}")
        return who if who != owner else None

    def _chapter_speakers(self, pi: int, want: str) -> set[str]:
        out: set[str] = set()
        for k in range(pi - 1, -1, -1):
            if self.paras[k].chapter != self.paras[pi].chapter:
                break
            out |= {n for n in self.paras[k].speakers if n and n[:1].isupper()
                    and not re.match(r"(?:[Tt]he|[Aa]n?)\s", n)
                    and (not want or fits_gender(want, self.cast.gender(n)))}
        return out

    def _possessor(self, g: str, pi: int, pos: int) -> str | None:
        """Whose relation it is: a subject of that sex in the narration before the tag, else
        the one who spoke just before, else the last one of that sex to act."""
        if not g:
            return None
        p = self.paras[pi]
        called = {n for q in p.quotes if q.speech and q.end <= pos for n in self.addressed(q.text)
                  if fits_gender(g, self.cast.gender(n))}
        if len(called) == 1:
            return called.pop()  # `"Come here, Tom," said his mother`: Tom's
        here = [n for s, n, subj in sorted(self.events[pi]) if s < pos and subj
                and fits_gender(g, self.cast.gender(n))]
        if here:
            return here[-1]
        last = self._last_speaker(pi)
        if last and fits_gender(g, self.cast.gender(last)):
            return last
        for k in range(pi - 1, max(-1, pi - 3), -1):
            if self.paras[k].chapter != self.paras[pi].chapter:
                break
            acted = [n for _, n, subj in sorted(self.events[k])
                     if subj and fits_gender(g, self.cast.gender(n))]
            if acted:
                return acted[-1]
        return None

    def _scene(self, pi: int, pos: int) -> set[str]:
        """Named people about: the last speakers, whom the line before called by name, and
        whom this paragraph's and the last paragraph's narration names."""
        named = set(self.recent[-3:])
        for k in (pi - 1, pi):
            if k < 0 or self.paras[k].chapter != self.paras[pi].chapter:
                continue
            p = self.paras[k]
            named |= {n for s, n, _ in self.events[k] if k < pi or s < pos}
            for q in p.quotes:
                if q.speech and (k < pi or q.end <= pos):
                    named |= self.addressed(q.text)
        return {n for n in named if n in self.cast.people and n[:1].isupper()
                and not re.match(r"(?:[Tt]he|[Aa]n?)\s", n)}
