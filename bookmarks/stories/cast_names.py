"""Finding the cast's names in text: every name and alias, and the short forms a reader
would recognise without being told (a surname, a first name, a title with the surname, a
common nickname of a first name), as long as they name one character only."""

from __future__ import annotations

import re
from collections.abc import Sequence

from bookmarks.stories.names import one_of
from bookmarks.stories.story import Character

TITLES = frozenset(
    "mr mrs ms miss master mistress dr doctor sir lady lord hon honourable honorable rev "
    "reverend canon father mother brother sister dame madam madame mme mademoiselle mlle "
    "monsieur signor signora señor señora don donna herr frau fräulein captain capt colonel "
    "col general major lieutenant lt sergeant sgt count countess duke duchess prince princess "
    "king queen baron baroness marquis marquess earl professor prof judge saint st uncle "
    "aunt old young little".split())
PARTICLES = frozenset("of de la le van von du da di del della der the a an and".split())

# common English short forms of first names (a persons list's "John Worthing" is the
# "Jack" of the speech labels); each maps to the full names it may stand for
_NICKNAMES = {
    "john": "jack johnny jock", "william": "will bill billy willie", "robert": "bob rob robin bobby",
    "richard": "dick rick dickon", "edward": "ned ted teddy ed", "henry": "harry hal hank",
    "james": "jim jem jimmy jamie", "thomas": "tom tommy", "charles": "charlie chas",
    "elizabeth": "bess betty beth liz lizzie lizzy eliza betsy lisa", "margaret": "meg peggy maggie madge",
    "catherine": "kate kitty cathy kit", "katherine": "kate kitty kathy kit", "mary": "molly polly",
    "anne": "nan nancy annie", "ann": "nan nancy annie", "algernon": "algy",
    "christopher": "kit chris", "nicholas": "nick", "benjamin": "ben", "alexander": "alec alex sandy",
    "frederick": "fred freddy", "joseph": "joe jos", "samuel": "sam", "michael": "mike mick",
    "peter": "pete", "anthony": "tony", "francis": "frank", "frances": "fanny", "sarah": "sally",
    "susan": "sue susie", "susanna": "sue susie", "dorothy": "dolly dot", "harriet": "hattie",
    "isabella": "bella", "matilda": "tilly", "theodore": "theo", "timothy": "tim", "daniel": "dan",
    "david": "dave", "patrick": "pat", "lawrence": "larry", "nathaniel": "nat", "jacob": "jake",
    "augustus": "gus", "archibald": "archie", "gwendolen": "gwen", "cecilia": "cissy",
    "helen": "nell nelly", "eleanor": "nell nelly", "ellen": "nell nelly", "jane": "jenny",
    "alfred": "alf alfie", "arthur": "art", "george": "georgie", "walter": "walt wat",
    "philip": "phil", "stephen": "steve", "matthew": "matt", "andrew": "andy", "louisa": "lou",
    "rebecca": "becky", "martha": "patty", "emily": "em emmy", "emma": "em emmy",
    "caroline": "carrie carry", "carol": "carrie", "albert": "bert bertie", "ethelbert": "bertie bert",
    "herbert": "bert herbie", "roberta": "bobbie", "josephine": "jo josie", "victoria": "vicky",
    "abigail": "abby", "judith": "judy", "theresa": "tess tessa", "teresa": "tess tessa",
}
SHORT_FORMS = {full: shorts.split() for full, shorts in _NICKNAMES.items()}  # first name → pet names
NICKNAMES: dict[str, set[str]] = {}
for _full, _shorts in _NICKNAMES.items():
    for _short in _shorts.split():
        NICKNAMES.setdefault(_short, set()).add(_full)

_ORDINALS = frozenset("first second third fourth fifth sixth one two three four five".split())
_IN_PLACE_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b(?!(?:Mr|Mrs|Ms|Miss|Dr|Sir|Lady|Lord|Master|Mistress|"
                            r"Enter|Exit|Exeunt|Re-enter|And|To|With|The)\b)[A-Z][a-z]+\s+$")
_IN_PLACE_NAME_AFTER = re.compile(r"^\s+(?!And\b|With\b|To\b)[A-Z][a-z]+")
_POSSESSIVE = re.compile(r"^['’][sS]?(?![\w])")


def words(name: str) -> list[str]:
    """The words of a name, folded, without punctuation."""
    return [w for w in re.split(r"[\s.,]+", name.casefold()) if w]


def proper_words(name: str) -> list[str]:
    """A name's own words: no titles, particles or initials (`Hon. Gwendolen Fairfax` →
    gwendolen, fairfax)."""
    return [w for w in words(name) if w not in TITLES and w not in PARTICLES and w not in _ORDINALS
            and len(w) >= 3 and not re.search(r"['’]", w)]


def short_forms(name: str) -> set[str]:
    """What a reader would call a character by, besides the full name: each of its own
    words, and the title with the surname or first name (`Lady Bracknell` → Bracknell;
    `Doctor Rank` → Rank; `Torvald Helmer` → Torvald, Helmer; `Sir Giles Morland` → Sir
    Giles, Sir Morland)."""
    own = proper_words(name)
    forms = set(own)
    all_words = words(name)
    if len(all_words) >= 2 and all_words[0] in TITLES and own:
        forms.add(f"{all_words[0]} {own[-1]}")
        forms.add(f"{all_words[0]} {own[0]}")  # `Sir Giles` for Sir Giles Morland
    return forms


class Finder:
    """Whole-word, case-insensitive name matching against the cast (longest name first).
    Names and aliases first; then the short forms (`short_forms`) that name one character
    only and are no one's name or alias, and the plural of a word several names share
    (`Angels`, `Scholars`) for all of them — those only where written with a capital, and
    not inside another proper name (`the River Harrow`, `Harrow Bridge`)."""

    def __init__(self, cast: Sequence[Character]):
        explicit = {k.casefold(): c.name for c in cast for k in c.keys() if k.strip()}
        derived: dict[str, set[str]] = {}
        for c in cast:
            for form in short_forms(c.name):
                derived.setdefault(form, set()).add(c.name)
        self.by_key = dict(explicit)
        self.derived = set()  # matched only when written with a capital
        for form, owners in derived.items():
            if len(owners) == 1 and form not in explicit:
                self.by_key[form] = next(iter(owners))
                self.derived.add(form)
        # a plural shared by several (`Angels` → Good Angel and Evil Angel)
        self.groups: dict[str, frozenset[str]] = {}
        for form, owners in derived.items():
            if len(owners) > 1 and " " not in form:
                for plural in (form + "s", form + "es", form[:-1] + "ies" if form.endswith("y") else ""):
                    if plural and plural not in self.by_key:
                        self.groups[plural] = frozenset(owners)
        keys = [*self.by_key, *self.groups]  # (case-folded: one way to spell each for the tree)
        self.pattern = re.compile(r"(?<![\w'’])(" + one_of(keys) + r")(?![\w])",
                                  re.IGNORECASE) if keys else None

    def groups_in(self, text: str, possessive: bool = False) -> list[tuple[int, int, frozenset[str]]]:
        """(start, end, characters) of every name in `text`, in order — one character, or
        several for a shared plural; a possessive (`Helmer's study`) only when asked for."""
        if self.pattern is None:
            return []
        out = []
        for m in self.pattern.finditer(text):
            if not possessive and _POSSESSIVE.match(text[m.end():]):
                continue
            key = m.group(1).casefold()
            if (key in self.derived or key in self.groups) and (
                    not m.group(1)[:1].isupper() or _IN_PLACE_NAME.search(text[:m.start()])
                    or _IN_PLACE_NAME_AFTER.match(text[m.end():])):
                continue  # `the River Harrow`, `Harrow Bridge`: a place, not Elsbeth Harrow
            out.append((m.start(), m.end(), self.groups.get(key) or frozenset({self.by_key[key]})))
        return out

    def mentions(self, text: str, possessive: bool = False) -> list[tuple[int, int, str]]:
        """(start, end, character) of every single character's name in `text`, in order."""
        return [(s, e, next(iter(n))) for s, e, n in self.groups_in(text, possessive) if len(n) == 1]

    def names(self, text: str) -> list[str]:
        out: list[str] = []
        for _, _, name in self.mentions(text, possessive=True):
            if name not in out:
                out.append(name)
        return out

    def vocatives(self, text: str) -> set[str]:
        """Names used to address someone: "Nell, …", "…, Nell." (not names talked about)."""
        out = set()
        for start, end, name in self.mentions(text, possessive=True):
            before, after = text[:start].rstrip(), text[end:end + 1]
            if (not before or before.endswith((",", "—", "!", "?", "."))) and after in (",", "!") \
                    or before.endswith(",") and after in (".", "!", "?", ","):
                out.add(name)
        return out
