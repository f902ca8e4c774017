"""The cast of a printed play: the list of persons, and which person each speaker label names.

The persons list (DRAMATIS PERSONAE, THE PERSONS OF THE PLAY, CHARACTERS, CAST) gives each
person's name and, after it, what the list says of them (`CLAUDIUS (King of Denmark)`,
`Nora, his wife.`, `Lane, Manservant`). A speaker label is linked to a listed person:
1. when it is the name or abbreviates its words in order (`HAM.` → Hamlet, `Lady B.` →
   Lady Bracknell, `Chasuble` → Rev. Canon Chasuble);
2. else when the list gives it as the person's other name in parentheses (`JOHN WORTHING
   (JACK)`), or it is a common short form of the person's first name (`JACK.` → John
   Worthing, `Algy` → Algernon; see cast_names.NICKNAMES);
3. else when it is the first word of what the list says of the person (`King.` → Claudius,
   King of Denmark; `NURSE.` → Anne, their nurse).
Each rule links only when exactly one person fits. Labels that differ only by a leading
article (`THE CHILDREN.` / `CHILDREN.`) are one speaker. An entry led by a possessive
(`Helmer's three young children`) describes, it does not name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from bookmarks.stories.cast_names import NICKNAMES, TITLES, proper_words
from bookmarks.stories.gutenberg import _LIST_END, _PERSONS, _PLAY_HEAD, _indent, _normalize

_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
_DESCRIPTION_SKIP = frozenset("his her their its the a an to of".split())


@dataclass
class Person:
    name: str
    description: str = ""
    other_names: list[str] = field(default_factory=list)


def persons_list(body: list[str]) -> tuple[list[Person], int]:
    """The persons in the list of persons, and the index of the line after the list."""
    begin = next((i for i, ln in enumerate(body) if _PERSONS.match(ln)), None)
    if begin is None:
        return [], 0
    people: list[Person] = []
    blanks, base, i = 0, None, begin + 1
    while i < len(body):
        raw, line = body[i], body[i].strip()
        if not line:
            blanks += 1
            if blanks >= 2 and people:
                break
        elif _PLAY_HEAD.match(line) or _LIST_END.match(line):
            break
        else:
            blanks = 0
            base = _indent(raw) if base is None else base
            if _indent(raw) <= base + 1 and line[0].isupper() and (person := _person(line)):
                people.append(person)
        i += 1
    return people, i


def _person(entry: str) -> Person | None:
    """`JOHN WORTHING, J.P.` → John Worthing; `CLAUDIUS (King of Denmark)   Mr. RYDER.` →
    Claudius, "King of Denmark"; `Rev. Canon Chasuble, D.D.` → Rev. Canon Chasuble."""
    entry = entry.replace("_", "")
    cut = re.search(r"\s*(?:[,;(:]|\s[—–-]+\s|\s--\s)", entry)
    head = entry[:cut.start()] if cut else entry
    words = head.split()
    if not words or re.search(r"['’]s?$", words[0]):
        return None
    if words[0].strip(".").isupper() and len(words[0].strip(".")) >= 2:
        words = _take_while(words, lambda w: w.isupper() or w in ("of", "de", "la"))  # HAMLET, prince
    else:
        words = _take_while(words, lambda w: w[:1].isupper() or w in ("of", "de", "la"))
    name = _name(" ".join(words[:5]))
    if len(name) < 2:
        return None
    said = entry[len(head):]
    said = re.split(r"\s{3,}|\t", said.strip(), maxsplit=1)[0]  # an actor's name in a column
    other = []
    for inner in re.findall(r"\(([^)]*)\)", said):
        if re.fullmatch(r"[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)?", inner.strip()) and \
                inner.strip().casefold() not in TITLES:
            other.append(_normalize(inner.strip()))
    description = " ".join(re.sub(r"[()\[\]{}]", " ", said).strip(" ,;:.—–-").split())
    return Person(name, description, other)


def _name(printed: str) -> str:
    """A listed name in display form: `GHOST OF HAMLET'S FATHER` → Ghost of Hamlet's Father."""
    name = _normalize(printed)
    if not printed.replace("'", "").replace("’", "").replace(".", "").replace(" ", "").isupper():
        return name
    return " ".join(w.lower() if k and w.lower() in ("of", "de", "la", "le", "the", "and", "von", "van")
                    else "-".join(p.capitalize() for p in w.split("-")) for k, w in enumerate(name.split()))


def _take_while(words: list[str], keep: Callable[[str], bool]) -> list[str]:
    out = []
    for word in words:
        if not keep(word):
            break
        out.append(word)
    return out


def _tokens(name: str) -> list[str]:
    return [w.strip(".,").casefold() for w in name.split() if w.strip(".,")]


def _head(description: str) -> str | None:
    """The first word of what the list says of someone (`King of Denmark` → king)."""
    for word in re.findall(r"[A-Za-z][\w'’-]*", description):
        if word.casefold() not in _DESCRIPTION_SKIP:
            return word.casefold()
    return None


@dataclass
class Cast:
    """The persons of the play, and which person each speaker label names."""

    people: list[Person]
    aliases: dict[str, set[str]] = field(default_factory=dict)
    seen: dict[str, str] = field(default_factory=dict)  # label without article → speaker
    upper_labels: bool = False  # the play prints its labels in capitals (see gutenberg_play)

    @property
    def persons(self) -> list[str]:
        return [p.name for p in self.people]

    def match(self, label: str) -> str | None:
        """The listed person a label names (see the module's rules); None when none or
        several fit."""
        said = _tokens(label)
        if not said or len(said[0]) < 2:
            return None
        best: list[tuple[tuple[int, int], str]] = []
        for person in self.persons:
            score = _abbreviates(said, _tokens(person))
            if score is None and said[0] in ("the", "a", "an") and len(said) > 1:
                score = _abbreviates(said[1:], _tokens(person))
            if score is not None:
                best.append((score, person))
        best.sort(reverse=True)
        if best:
            return best[0][1] if len(best) == 1 or best[0][0] > best[1][0] else None
        if len(said) > 2:
            return None
        key = " ".join(said)
        for rule in (self._other_name, self._nickname, self._described):
            fits = {p.name for p in self.people if rule(key, p)}
            if len(fits) == 1:
                return fits.pop()
            if fits:
                return None
        return None

    @staticmethod
    def _other_name(key: str, person: Person) -> bool:
        return any(key == o.casefold() for o in person.other_names)

    @staticmethod
    def _nickname(key: str, person: Person) -> bool:
        own = proper_words(person.name)
        return bool(own) and own[0] in NICKNAMES.get(key, ())

    @staticmethod
    def _described(key: str, person: Person) -> bool:
        return " " not in key and _head(person.description) == key

    def resolve(self, label: str) -> str:
        name = _normalize(label)
        person = self.match(name)
        if person is None:
            bare = _ARTICLE.sub("", name).casefold()
            person = self.seen.setdefault(bare, name)
        if person != name:
            self.aliases.setdefault(person, set()).add(name)
        return person


def _abbreviates(said: list[str], full: list[str]) -> tuple[int, int] | None:
    """How many of `said` equal a word of `full` when each is a prefix of the next unused
    word of `full`, in order, and (negated) how many words of `full` were passed over before
    the first; None when they do not fit (`Ham` is Hamlet rather than the Ghost of Hamlet's
    Father)."""
    exact, k, skipped = 0, 0, 0
    for n, word in enumerate(said):
        short_ok = n > 0 or len(word) >= 3  # `Lady B`, but not `Mr` for `Mrs.`
        while k < len(full) and not (full[k] == word or short_ok and full[k].startswith(word)):
            k += 1
            skipped += n == 0
        if k == len(full):
            return None
        exact += word == full[k]
        k += 1
    return exact, -skipped
