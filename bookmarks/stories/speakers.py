"""The speaking cast of a prose text: which words are names, which variants are one person,
and whether each is he, she or it.

* A capitalised word is part of a name only when the text also capitalises it inside a
  sentence, or never writes it in lower case, and it is no sentence word (`Those Korvin` →
  `Korvin`, `Dutifully Scribney` → `Scribney`, `To Robert` → `Robert`, `She'd` → nothing).
* Variants are merged into the fullest form, the others kept as aliases: `Slops` and
  `Captain Slops`, `Miss Eagen` and `Sue Eagen`, `the Rabbit` and `the White Rabbit`, `the
  nephew` and `Scrooge's nephew`. A short form that fits two people stays apart.
* Gender comes from titles (Mr, Mrs, Miss, Sir, Lady, King …), person nouns (man, lady,
  nephew …), a modest list of first names, and the pronouns the narration uses right after
  the name; a character whose gender the text does not show has none.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from bookmarks.stories.names import one_of
from bookmarks.stories.tags import (
    LOWER,
    NAME_PARTICLES,
    PERSON_NOUNS,
    PRONOUN,
    STOP_WORDS,
    TITLES,
    UPPER,
    mask_abbreviations,
)

MALE, FEMALE, NEUTER = "m", "f", "n"
TITLE_GENDER = {
    **dict.fromkeys("mr mister sir lord master king prince duke count baron father brother uncle "
                    "squire grandpa monsieur m signor signore señor senor herr".split(), MALE),
    **dict.fromkeys("mrs missus miss ms madam madame mme mlle lady queen princess duchess "
                    "countess baroness mother sister aunt auntie dame mistress granny grandma "
                    "nurse mademoiselle signora signorina señora senora señorita frau "
                    "fräulein".split(), FEMALE),
}
_NOUN_GENDER = {
    **dict.fromkeys("man gentleman boy lad youth nephew uncle father brother son husband "
                    "grandfather landlord host king prince duke master".split(), MALE),
    **dict.fromkeys("woman lady girl lass maid maiden niece aunt mother sister daughter wife "
                    "grandmother granny landlady hostess queen princess duchess mistress widow "
                    "housekeeper".split(), FEMALE),
}
FIRST_NAMES = {
    **dict.fromkeys("""
    john james william george charles thomas henry robert edward richard joseph samuel david
    peter paul michael arthur frederick francis albert alfred walter harry harold frank fred
    jack tom tommy jim jimmy joe bob bill billy ben benjamin dick ned ted teddy sam will willie
    andrew daniel stephen philip mark matthew luke simon hugh ralph roger oliver nicholas
    patrick anthony tony christopher kit jonathan nathan isaac jacob abraham adam lawrence
    laurie laurence ernest herbert horace percy reginald cecil basil louis lewis martin
    """.split(), MALE),
    **dict.fromkeys("""
    mary anne ann anna elizabeth jane margaret sarah emma alice catherine kate katherine kitty
    ellen helen eleanor lucy lydia charlotte harriet martha susan sue susanna julia louisa
    caroline emily amy beth meg jo josephine clara dorothy edith florence grace hannah isabel
    isabella jenny jessie judith laura lily lizzy lizzie maria marian marianne mabel maggie
    molly nancy nelly nell peggy polly rose ruth sophia sophie fanny betsy betty bessie
    agnes alice esther eliza frances georgiana henrietta matilda rebecca rachel diana
    """.split(), FEMALE),
}
_PRONOUN_GENDER = {**dict.fromkeys("he his him himself".split(), MALE),
                   **dict.fromkeys("she her hers herself".split(), FEMALE),
                   **dict.fromkeys("it its itself".split(), NEUTER)}
_TITLE_RE = re.compile(rf"^(?:{TITLES})\.?$")
_CALENDAR = frozenset("january february march april may june july august september october "
                      "november december monday tuesday wednesday thursday friday saturday "
                      "sunday".split())
# titles that name someone by themselves: `said the King`, and a family's `said Mother`
_BARE_TITLES = frozenset("King Queen Captain Doctor Major Colonel Professor Mother Father Granny "
                         "Grandma Grandpa Nurse".split())
_MID_CAP = re.compile(rf"(?<=[{LOWER}0-9,;] )([{UPPER}][{LOWER}’'\-]+)")
_WORDS = re.compile(rf"[{UPPER}{LOWER}][{LOWER}’'\-]*")


GROUP_NUMBERS = "two|three|four|five|six|both"  # `the two Musketeers`: a group of its own
_GROUP_OF = re.compile(rf"(?:{GROUP_NUMBERS})\s+(?=[A-Z][a-z]+s\b)")
_TITLE_NAME = re.compile(rf"\b({TITLES})(\.?)\s+((?:[A-Z][a-z]+\s+)?[A-Z][a-z]+)")


class NameChecker:
    """Which capitalised words of a text can be names."""

    def __init__(self, text: str) -> None:
        self.mid_cap = Counter(_MID_CAP.findall(text))
        self.lower = Counter(w for w in _WORDS.findall(text) if w[:1].islower())

    def is_name_word(self, word: str) -> bool:
        core = re.split(r"[’']", word)[0] if re.search(r"[’'](?:d|ll|s|t|re|ve|m)$", word) else word
        folded = core.casefold()
        if not core[:1].isupper() or folded in STOP_WORDS or len(core) < 2:
            return False
        if core != word and folded in ("she", "he", "it", "i", "we", "they", "you", "that", "there"):
            return False
        if folded.endswith("ly") and not self.mid_cap[core]:
            return False
        return self.mid_cap[core] > 0 or self.lower[folded] == 0

    def clean(self, surface: str) -> str | None:
        """A name as written, without the sentence words before it; None if nothing is left."""
        words = surface.split()
        while words and not (self.is_name_word(words[0]) or _TITLE_RE.match(words[0])
                             or _particle_name(words, self.is_name_word)):
            words = words[1:]
        if not words or (len(words) == 1 and _TITLE_RE.match(words[0]) and words[0] not in
                         _BARE_TITLES):
            return None
        for k, w in enumerate(words[1:]):
            if w[:1].isupper() and not self.is_name_word(w) and not _TITLE_RE.match(w) \
                    and not (_TITLE_RE.match(words[k]) and w.casefold() not in _NO_SURNAME_WORDS):
                return None  # (`Mrs. March`, `Captain Good`: a word after a title is a surname)
        return " ".join(words)


def _particle_name(words: list[str], is_name) -> bool:
    """The name opens with its particle: `von Horn`, `de Vere`, `d'Artagnan`."""
    if words[0] in NAME_PARTICLES:
        return len(words) > 1 and is_name(words[1])
    m = re.fullmatch(r"d[’']([A-Z]\w+)", words[0])
    return bool(m) and is_name(m.group(1))


_NO_SURNAME_WORDS = frozenset("""the a an and but or nor so then when while if as of in on at to for
by with from i he she it we they you his her its my our your their this that""".split())


def display_name(surface: str, checker: NameChecker, nouns: frozenset[str] = frozenset()
                 ) -> str | None:
    """The character a tag's subject names, in display form, or None for pronouns and words
    that are no name: `the March Hare` → `March Hare`, `the nephew` → `Nephew`, `Scrooge's
    nephew` stays, `her mother` → `Mother`, `Dutifully Scribney` → `Scribney`. `nouns`: other
    lower-case nouns the text makes speakers (`the wub`, when it speaks more than once)."""
    s = " ".join(surface.split())
    s = re.sub(r"^D(?=[’'][A-Z])", "d", s)  # `D’Artagnan added …` opens a sentence: d’Artagnan
    if re.search(r"\s+and\s+(?:[A-Z]|(?:the|his|her|a|an)\s)", s):
        return None  # `Harriet and Maria` speak together: no one character
    if re.fullmatch(PRONOUN, s) or s.casefold() in ("them", "him", "her", "me", "us") \
            or re.fullmatch(r"the (?:other|latter|former)", s.casefold()):
        return None  # `the other` is whoever's turn it is, not a character
    article = re.match(r"^(?:the|a|an|The|A|An)\s+", s)
    if m := re.match(r"^(?:his|her|their|my|our|your)\s+(.+)$", s, re.I):
        rest = m.group(1)  # `her mother`: named by the relation, as the text names her
        return rest[:1].upper() + rest[1:] if rest.split()[-1] in PERSON_NOUNS else None
    if article:
        rest = s[article.end():]
        if _GROUP_OF.match(rest):
            return rest[:1].upper() + rest[1:]  # `the two Musketeers`: a group, not a Musketeer
        if (m := re.match(r"(?:[a-z][a-z-]+\s+(?:and\s+)?){1,3}"
                          rf"(?=[A-Z]|d[’'][A-Z]|(?:{'|'.join(NAME_PARTICLES)})\s+[A-Z])", rest)) \
                and not re.search(r"\b(?:of|in|on|at|to|with|for|from|by)\b", m.group(0)):
            rest = rest[m.end():]  # `the good-natured Rat` is the Rat, `the terrified d’Artagnan` he
        if _particle_name(rest.split(), checker.is_name_word):
            return checker.clean(rest)
        if rest[:1].isupper():  # `the Very Young Man`: the article marks where it starts
            words = rest.split()
            return rest if checker.is_name_word(words[-1]) or len(words) > 1 else checker.clean(rest)
        words = rest.split()
        if words[-1] not in PERSON_NOUNS and words[-1] not in nouns:
            return None
        return rest[:1].upper() + rest[1:]
    if "’s " in s or "'s " in s:
        owner, noun = re.split(r"[’']s\s+", s, maxsplit=1)
        owner = checker.clean(owner)
        return f"{owner}’s {noun}".replace("’", "'") if owner else None
    return checker.clean(s)


@lru_cache(maxsize=8192)  # merge_variants asks of each pair of names
def _core(name: str) -> tuple[str | None, frozenset[str]]:
    words = name.replace(".", "").casefold().split()
    title = words[0] if len(words) > 1 and words[0] in _TITLE_WORDS else None
    if title is None and len(words) > 1 and words[0] in PERSON_NOUNS and name.split()[1][:1].isupper():
        title = words[0]  # a calling used as a title: `Shepherd Oak`, `Farmer Boldwood`
    if title in ("old", "young", "little") and name.split()[1][:1].islower():
        title = None  # `Old man` is no title and a name: not the `Young man`
    core = words[1:] if title else words
    return title, frozenset(re.sub(r"^d[’']", "", w) for w in core if w not in ("of", "de", "van", "von"))


_TITLE_WORDS = frozenset(t.casefold() for t in TITLES.split("|"))
_OWNED = re.compile(r"[A-Z][\w.]*(?:\s+[A-Z][\w.]*)*[’']s\s+[a-z]+$")  # `Scrooge's nephew`
_TITLE_SHORT = {"doctor": ("dr",), "captain": ("capt",), "professor": ("prof",), "colonel": ("col",),
                "lieutenant": ("lieut",), "sergeant": ("sgt",), "reverend": ("rev",)}


def titled_surnames(text: str) -> dict[str, set[str]]:
    """{title word (`dr`, `captain`): the surnames the text gives it} (`Dr. Will Kennicott`
    and `Dr. Kennicott` are one)."""
    out: dict[str, set[str]] = {}
    for m in _TITLE_NAME.finditer(text):
        if m.group(2) and not re.fullmatch(_ABBREVIATED, m.group(1)) or m.group(3).split()[0] in _NO_SURNAME:
            continue  # `you have here, Captain. You keep it`: a sentence ends after the title
        out.setdefault(m.group(1).casefold(), set()).add(m.group(3).split()[-1])
    return out


_ABBREVIATED = r"(?:Mrs?|Ms|Dr|St|Capt|Col|Gen|Prof|Rev|Sgt|Lt|Maj|Mme|Mlle|Hon|Messrs|Gov|Supt|Insp)"
_NO_SURNAME = frozenset("I It You He She We They The This That There Then What Why How Yes No Oh".split())


def several_titled(surnames: dict[str, set[str]], word: str) -> bool:
    """The text titles two people or more with this word (`Dr. Lanyon` and `Dr. Jekyll`):
    `the doctor` may be either."""
    forms = {word.casefold(), *_TITLE_SHORT.get(word.casefold(), ())}
    return len(set().union(*(surnames.get(f, set()) for f in forms))) > 1


def merge_variants(names: list[str], titled: set[str] | None = None,
                   apart: Callable[[str, str], bool] | None = None) -> dict[str, str]:
    """Map each name to its fullest variant: `Slops` and `Captain Slops` → `Captain Slops`,
    `Anna` / `Miss Vell` → `Anna Vell`, `the Captain` → the one captain. A short form that
    fits two people stays apart; so do the titled forms of a family (`Mr. Bennet` and
    `Mrs. Bennet` are not `Elizabeth Bennet`), and a title that does not fit the first
    name's gender (`Mr. Eagen` is not `Sue Eagen`). `titled`: the names written with an
    article (`the Captain`), which alone may stand for the one character of that title.
    `apart(name, head)`: the text shows the two are two people (`cast_people.told_apart`)."""
    titles: dict[frozenset[str], set[str]] = {}
    for n in names:
        t, c = _core(n)
        if t:
            titles.setdefault(c, set()).add(t)
    order = sorted(set(names), key=lambda n: (-len(_core(n)[1]), _core(n)[0] is None, -len(n), n))
    canon: dict[str, str] = {}
    heads: list[str] = []
    for name in order:
        title, core = _core(name)
        fits = [h for h in heads if core <= _core(h)[1] and _title_fits(title, core, h, titles)
                and not (title is None and core < _core(h)[1] and core <= PERSON_NOUNS
                         and not _OWNED.match(h)) and not (apart and apart(name, h))]
        # a bare description is no short form: `the man` is not `the little man` (but `the
        # nephew` is `Scrooge's nephew`)
        if not fits and len(core) == 1 and next(iter(core)) in _TITLE_WORDS \
                and (titled is None or name in titled):  # `the Captain`
            forms = {next(iter(core)), *_TITLE_SHORT.get(next(iter(core)), ())}
            fits = sorted({h for h in heads if _core(h)[0] in forms}  # `the doctor`: `Dr.
                          | {canon[n] for n in canon if _core(n)[0] in forms})  # Kennicott`, Will
        if not fits and name.casefold() in (h.casefold() for h in heads):
            fits = [h for h in heads if h.casefold() == name.casefold()]
        if len(fits) > 1 and title is None and len(core) == 1:  # `said Racksole`: Mr. Theodore
            men = [h for h in fits if TITLE_GENDER.get(_core(h)[0] or "") == MALE]  # Racksole,
            if len(men) == 1 and all(TITLE_GENDER.get(_core(h)[0] or "") == FEMALE  # not Miss
                                     for h in fits if h != men[0]):  # Racksole: a bare surname
                fits = men  # is the man's
        if len(fits) == 1:
            canon[name] = fits[0]
        else:
            heads.append(name)
            canon[name] = name
    for pet, full in _pet_forms(heads).items():  # `Bobbie` is Roberta, `Billy Smallbury` William
        for n, head in canon.items():
            if head == pet:
                canon[n] = full
    return canon


def _pet_forms(heads: list[str]) -> dict[str, str]:
    """{pet-name head: full-name head} where a head's first word is a common pet form of one
    other head's first name, the rest of the two names alike (`Bertie Stanhope` / `Ethelbert
    Stanhope`, `Bobbie` / `Roberta`); a pet form two heads could own stays apart."""
    from bookmarks.stories.cast_names import SHORT_FORMS

    owners: dict[tuple[str, tuple[str, ...]], set[str]] = {}
    for head in heads:
        words = head.split()
        if words and not TITLE_GENDER.get(words[0].rstrip(".").casefold()):
            for short in SHORT_FORMS.get(words[0].casefold(), ()):
                owners.setdefault((short, tuple(words[1:])), set()).add(head)
                if len(words) > 1:  # `Tom` alone is `Thomas Reed`, the one Thomas
                    owners.setdefault((short, ()), set()).add(head)
    out = {}
    for head in heads:
        words = head.split()
        found = owners.get((words[0].casefold(), tuple(words[1:])), set()) if words else set()
        if len(found) == 1 and (full := next(iter(found))) != head:
            out[head] = full
    return out


def _title_fits(title: str | None, core: frozenset[str], head: str,
                titles: dict[frozenset[str], set[str]]) -> bool:
    head_title, head_core = _core(head)
    if title is None and head_title in WIFE_TITLES and len(core) == 1 \
            and not (FIRST_NAMES.get(next(iter(core))) == FEMALE and len(head_core) > 1):
        return False  # `James` is not `Mrs. James`, his wife (`Mary` is `Mrs. Mary Dolan`)
    if title is None or head_title == title:
        return True
    if head_title is not None:
        return False
    if title in WIFE_TITLES and len(core) == 1 and head.replace(".", "").casefold().split()[0] in core:
        return False  # `Mrs. Jolyon` is Jolyon Forsyte's wife, not he
    if len({TITLE_GENDER.get(t, t) for t in titles.get(core, ())} - {None}) > 1 \
            and len({TITLE_GENDER.get(t) for t in titles.get(core, ())} - {None}) != 1:
        return False  # a family: Mr. and Mrs. Bennet (`Mr. Oak` and `Shepherd Oak` are one)
    first = next((w for w in head.replace(".", "").casefold().split() if w not in core), None)
    g, fg = TITLE_GENDER.get(title), FIRST_NAMES.get(first or "")
    return not (g and fg and g != fg)


@dataclass
class Person:
    name: str
    forms: set[str] = field(default_factory=set)  # every way the text names them
    genders: set[str] = field(default_factory=set)


def gender_from_name(name: str) -> str | None:
    words = name.replace(".", "").replace("'s ", " ").split()
    first = words[0].casefold()
    if first in TITLE_GENDER and len(words) > 1:
        return TITLE_GENDER[first]
    if words[-1].casefold() in _NOUN_GENDER and (name[:1].islower() or len(words) <= 3):
        return _NOUN_GENDER[words[-1].casefold()]
    if first in ("king", "queen", "prince", "princess", "duke", "duchess"):
        return TITLE_GENDER.get(first)
    if name[:1].islower() or len(words) <= 2 and words[-1].islower() or name.casefold().startswith("the "):
        last = words[-1].casefold()  # `the clergyman`, `Young man`, `the washerwoman`
        if last.endswith("woman"):
            return FEMALE
        if last.endswith("man") and not last.endswith(("human", "shaman")):
            return MALE
    return FIRST_NAMES.get(first)


def pronoun_votes(text: str, forms: dict[str, str]) -> dict[str, Counter]:
    """For each character (by canonical name), the pronouns the sentence uses after a mention
    of them as its subject, up to the next mention of anyone."""
    if not forms:
        return {}
    alternatives = one_of(forms)
    pattern = re.compile(r"(?<![\w’'-])(" + alternatives
                         + r")(?![\w’'-])")
    votes: dict[str, Counter] = {}
    for sentence in re.split(r"(?<=[.!?;])\s+|[“”\"]", mask_abbreviations(text)):
        sentence = sentence.replace("\u2024", ".")
        hits = list(pattern.finditer(sentence))
        for k, m in enumerate(hits):
            stop = hits[k + 1].start() if k + 1 < len(hits) else len(sentence)
            after = sentence[m.end():stop]
            if not re.match(r"(?:,[^,]{1,60},)?\s+(?:[a-z]+ly\s+)?[a-z]", after) \
                    or re.match(r"\s+(?:and|or|of|’s|'s)\b", after):
                continue
            if p := _own_pronoun(after):
                votes.setdefault(forms[m.group(1)], Counter())[_PRONOUN_GENDER[p]] += 1
    return votes


_NOT_A_NOUN = frozenset("""more most less to and or in at that the a an as with from for by on
up down out away again so very too now then off back over into once all alone there here
about before after but if when while than through across behind beside was were is had
""".split())


def _own_pronoun(after: str) -> str | None:
    """The first pronoun after a subject's mention that can be the subject's own: not `him`,
    nor an object `her` (`Selden had never seen her more radiant` says nothing of Selden);
    `her` before a noun (`shook her head`) is hers."""
    for p in re.finditer(r"\b(he|his|him|himself|she|her|hers|herself|it|its|itself)\b(\s+\w+)?",
                         after):
        word = p.group(1)
        if word == "him":
            continue
        if word == "her":
            nxt = (p.group(2) or "").strip()
            if not nxt or not nxt[:1].islower() or nxt in _NOT_A_NOUN:
                continue
        return word
    return None


_TITLED = re.compile(r"\b(?:(" + "|".join(t.capitalize() for t in TITLE_GENDER if len(t) > 3
                                          and t not in ("king", "queen", "nurse", "master"))
                     + r")|(Mr|Mrs|Ms|Dr|Mme|Mlle)\.?)[ \t]*\n?[ \t]*([A-Z]\w+)")


def titled_genders(text: str) -> dict[str, set[str]]:
    """Name word → the genders of the titles the whole text (speech too) puts before it:
    `“Mr. Selden—what good luck!”` says Selden is a man; `Mr. and Mrs. Bennet` says nothing
    of `Bennet` (both), and neither does `Dr.`."""
    seen: dict[str, set[str]] = {}
    for m in re.finditer(r"\bMrs?\.?\s+and\s+Mrs?\.?\s+([A-Z]\w+)", text):
        seen.setdefault(m.group(1), set()).update((MALE, FEMALE))  # a couple: either
    for m in _TITLED.finditer(text):
        title = (m.group(1) or m.group(2)).casefold()
        if title != "dr":
            seen.setdefault(m.group(3), set()).add(TITLE_GENDER[title])
    return seen


def genders(person: Person, votes: Counter | None,
            titled: dict[str, set[str]] | None = None) -> set[str]:
    for form in sorted(person.forms, key=len, reverse=True):
        if g := gender_from_name(form):
            return {g}
    if titled:  # a surname the text titles one way only: `Mr. Selden`, `Miss Farish`
        words = {w for f in person.forms for w in f.split() if w[:1].isupper()}
        said = set().union(*(titled.get(w, set()) for w in words))
        own = {TITLE_GENDER.get(t) for f in person.forms if (t := _core(f)[0])}
        if len(said) == 1 and (not own or own & said):  # (`Miss Maxon` is not `Professor
            return said  # Maxon`: another of the family)
    if not votes:
        return set()
    total = sum(votes.values())
    top, n = votes.most_common(1)[0]
    return {top} if n >= 2 and n >= 0.6 * total else set()


WIFE_TITLES = frozenset("mrs missus madame mme señora senora signora frau".split())
_MAIDEN_TITLES = frozenset("miss mlle mademoiselle señorita senorita signorina fräulein".split())


def family_merges(people: dict[str, Person], texts: list[str],
                  told_apart: Callable[[str, str], bool] | None = None) -> dict[str, str]:
    """Within a family, once the text has given everyone a sex: `Mrs. Pontellier` is `Edna
    Pontellier` when she is the one woman of that surname named by a first name and no `Miss
    Pontellier` is there (a daughter); `Mr. Inglethorp` is `Alfred Inglethorp`, the one man of
    that surname named by a first name; a bare `Pontellier` is that man when the others of
    that surname are all women. Never two whom one paragraph names side by side (`Harriet
    Grey … Mr. Grey … Mrs. Grey`: her parents), nor two `told_apart` tells apart (`"Come in,
    Audrey," said Mrs. Stevens`). {head → the head it joins}."""
    flat = [" ".join(t.split()) for t in texts]

    def apart(a: str, b: str) -> bool:
        return not any(a in t and b in t for t in flat) and not (told_apart and told_apart(a, b))

    by_surname: dict[str, list[str]] = {}
    for head in people:
        words = head.replace(".", "").split()
        if len(words) == 2 and words[1][:1].isupper() or len(words) == 1 and words[0][:1].isupper():
            by_surname.setdefault(words[-1], []).append(head)
    out: dict[str, str] = {}
    for heads in by_surname.values():
        if len(heads) < 2:
            continue
        titles = {h: _core(h)[0] for h in heads}
        first = [h for h in heads if titles[h] is None and len(h.split()) == 2]
        women = [h for h in first if people[h].genders == {FEMALE}]
        if len(women) == 1 and not any(t in _MAIDEN_TITLES for t in titles.values()):
            out.update({h: women[0] for h in heads if titles[h] in WIFE_TITLES and apart(h, women[0])})
        bare = [h for h in heads if len(h.split()) == 1]
        men = [h for h in heads if titles[h] and TITLE_GENDER.get(titles[h]) == MALE]
        sons = [h for h in first if people[h].genders == {MALE}]
        if len(men) > 1 or len(sons) > 1:
            continue
        if men and sons and not apart(men[0], sons[0]):
            continue  # a father and his son: a bare surname may be either
        him = sons[0] if sons else men[0] if men else None
        if men and sons:
            out[men[0]] = him  # `Mr. Inglethorp` is Alfred Inglethorp, the one man so named
        rest = set(heads) - set(bare) - set(men) - set(sons)
        if him and len(bare) == 1 and rest and all(people[h].genders == {FEMALE} for h in rest):
            out[bare[0]] = him
    return out
