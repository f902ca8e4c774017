"""People the narration names or describes, beyond the speakers the tags name: fuller
forms of a speaker's name, people named by a title or a first name, people known only by
a description that a pronoun's line continues (used by `dialogue.Cast`; `paras` are its
`dialogue.Para`s, not imported here: this module sits below it)."""

from __future__ import annotations

import re
from collections import Counter

from bookmarks.stories.attribution_context import main_subjects
from bookmarks.stories.names import one_of
from bookmarks.stories.speakers import FEMALE, MALE, NameChecker, display_name, gender_from_name
from bookmarks.stories.tags import LOWER, PROPER, TITLES, UPPER, clean

__all__ = ["TITLE_WORD", "described_speakers", "full_names", "named_persons", "surnamed_persons",
           "told_apart"]


_FULL_NAME = re.compile(rf"(?<![\w’'-])(?:[{UPPER}][{LOWER}]+\s+(?:(?:de|du|van|von|da|di|del)\s+)?){{1,2}}"
                        rf"[{UPPER}][{LOWER}]+(?![\w’'-])")  # (`Philippe de Vilmorin`)
TITLE_WORD = re.compile(rf"(?:{TITLES})$")


def full_names(paras: list, checker: NameChecker, found: dict[str, str]) -> dict[str, str]:
    """Fuller forms of a speaker's name that only the narration gives (`Tom Harker held the
    candle` when `Harker` speaks). A title is no surname: `a German Baroness` is no fuller
    form of `the Baroness` (a word before a title describes)."""
    single = {n for n in found if len(n.split()) == 1 and n[:1].isupper() and not TITLE_WORD.match(n)}
    titled = {w[1] for n in found if len(w := n.replace(".", "").split()) == 2 and TITLE_WORD.match(w[0])
              and w[1][:1].isupper()}  # `Miss Baker` speaks: `Jordan Baker`
    first = single - titled  # `Daisy` speaks: `Daisy Buchanan`
    last = single | titled
    out: dict[str, str] = {}
    for p in paras:
        for k in range(len(p.segs)):
            seg = p.seg(k)
            for m in _FULL_NAME.finditer(seg):
                name = checker.clean(re.sub(r"[’']s$", "", m.group(0)))
                if not name or len(words := name.split()) < 2 or TITLE_WORD.match(words[0]) \
                        or _family(seg, m) or len(set(words)) < len(words):
                    continue  # (`called Scrooge Scrooge, and sometimes Marley`: no name)
                if words[-1] in last or words[0] in first and len(words) == 2:
                    out.setdefault(name, name)
    return out


def _family(seg: str, m: re.Match) -> bool:
    """`dinner with the Tom Buchanans`, `Aunts Ann, Juley, and Hester`: a family, not a person."""
    first = m.group(0).split()[0]
    return m.group(0).endswith("s") and bool(re.search(r"\b[Tt]he\s+$", clean(seg)[:m.start()])) \
        or first.endswith("s") and bool(TITLE_WORD.match(first[:-1]))


def named_persons(paras: list, checker: NameChecker, found: dict[str, str]) -> dict[str, str]:
    """People the narration names by a title or a first name (`Alice curtsied`, `Mrs. Dray
    has been here`): known for pronouns and beats, though they speak only where a rule
    gives them a quotation."""
    out: dict[str, str] = {}
    for p in paras:
        for k in range(len(p.segs)):
            seg = clean(p.seg(k))
            for m in re.finditer(rf"(?<![\w’'-]){PROPER}(?![\w’'-])", seg):
                name = checker.clean(re.split(r"[’']s\b", m.group(0))[0])  # not `Jekyll’s`, nor
                # `Mr Racksole's American` (energy): the name ends at its possessive
                if name and name not in found and gender_from_name(name) and not _family(p.seg(k), m) \
                        and not (TITLE_WORD.match(name) and _firm(seg[:m.start()], name)):
                    out.setdefault(name, name)
    return out


_PRONOUN_SEX = {"he": MALE, "she": FEMALE}
# `the firm of Storm and King`, `hunt up Storm and King`: a bare title word that ends a
# firm's name is no one (the king is `the King`; `Tom and Father` are two people)
_FIRM = re.compile(r"\b(?:firm|house|company|offices?|store|shop)\s+of\s+(?:[A-Z][\w’'-]+\s+(?:and|&)\s+)?$")
_PARTNER = re.compile(r"\b([A-Z][\w’'-]+)\s+(?:and|&)\s+$")
_KIN = frozenset("father mother sister brother aunt auntie uncle cousin granny grandma grandpa nurse".split())


def _firm(before: str, name: str) -> bool:
    if _FIRM.search(before):
        return True
    m = _PARTNER.search(before)
    return bool(m) and name.casefold() not in _KIN and gender_from_name(m.group(1)) is None


_DESCRIBED = re.compile(r"(?:the|a|an|this|that)\s+[a-z][\w-]*\s+[a-z]|(?:a|an)\s+[a-z][\w-]*$", re.I)


def described_speakers(paras: list, checker: NameChecker, nouns: frozenset[str]) -> dict[str, str]:
    """People a reader knows only by a description that `he`/`she` then continues as a
    speaker: a paragraph that opens with a quotation tagged by a pronoun, right after a
    narration paragraph whose last clause's subject is that description (a noun with a word
    before it), of the pronoun's sex, whom the text brought in as someone new a little
    before (`a solitary Woman` … `The strange woman spoke first.` ¶ `"Is that the road to
    London?" she said.`); `The young man stepped down.` alone may be anyone met before.
    {display name: surface}; speakers like those a tag names (`said the strange woman`)."""
    out: dict[str, str] = {}
    for pi in range(1, len(paras)):
        p, prev = paras[pi], paras[pi - 1]
        if not p.quotes or p.text[:p.quotes[0].start].strip() or prev.quotes or prev.chapter != p.chapter:
            continue
        tag = p.after[0] if p.after else None
        sex = _PRONOUN_SEX.get(tag.subject.casefold()) if tag else None
        if not sex or not (found := main_subjects(prev.text)):
            continue
        subject = " ".join(found[0][1].split())
        if not _DESCRIBED.match(subject):
            continue  # `the lady` may be anyone so called: `the strange woman` is one, `a girl` new
        name = display_name(re.sub(r"^(?:[Aa]n?|[Tt]his|[Tt]hat)\s+", "the ", subject), checker, nouns)
        if not name or gender_from_name(name) != sex:
            continue
        noun = re.escape(subject.split()[-1])
        told = "\n".join(x.text for x in paras[max(0, pi - 12):pi] if x.chapter == p.chapter)
        if re.search(rf"\b(?:a|an)\s+(?:[\w-]+\s+){{0,3}}?{noun}\b", told, re.I):
            out.setdefault(name, subject)  # brought in as someone new: `a solitary Woman`
    return out


def surnamed_persons(paras: list, checker: NameChecker, found: dict[str, str]) -> dict[str, str]:
    """People the narration names by a bare name no list knows (`Liddy set her lips tight`,
    `Hanson sat every evening in the front room`): a name word that is the subject of two
    main clauses or more, which the narration goes on calling `he` (or `she`) — at least
    twice, and four times in five. Places and things (`Chicago was …`) are no one's `he`."""
    words = {w for n in found for w in n.replace(".", "").split()}
    counts: dict[str, int] = {}
    for p in paras:
        for k in range(len(p.segs)):
            for _, subject in main_subjects(clean(p.seg(k))):
                if " " not in subject and re.fullmatch(PROPER, subject) and subject not in words \
                        and not re.search(r"[’']s?$", subject) \
                        and not TITLE_WORD.match(subject) and checker.clean(subject) == subject:
                    counts[subject] = counts.get(subject, 0) + 1
    names = {w for w, n in counts.items() if n >= 2}
    if not names:
        return {}
    narration = "\n".join(clean(p.seg(k)) for p in paras for k in range(len(p.segs)))
    alternatives = one_of(names)
    said: dict[str, list[str]] = {}  # `Toto looked up into her face with his eyes`: his, not her
    then = r"\s+[a-z][^.!?;:“”\"A-Z]*?\b(he|his|himself|she|herself)\b"  # the rest of its sentence
    for m in re.finditer(rf"(?<![\w’'-])({alternatives}){then}", narration):
        said.setdefault(m.group(1), []).append(MALE if m.group(2) in ("he", "his", "himself") else FEMALE)
    return {w: w for w, sexes in said.items() for sex in (MALE, FEMALE)
            if sexes.count(sex) >= 2 and sexes.count(sex) >= 0.8 * len(sexes)}


def told_apart(paras: list, checker: NameChecker, nouns: frozenset[str], narration: str,
               names: list[str]):
    """A predicate for `speakers.merge_variants`: is the titled name (`Mrs. Stevens`,
    `Professor Maxon`, `Mr. Sedley`) someone other than the fuller name of that surname
    (`Audrey Stevens`, `Virginia Maxon`, `Mr. Joseph Sedley`) it would join? It is when a
    line tagged with the titled name calls the other by their first name (`"Come in,
    Audrey," said Mrs. Stevens`; `"Bravo, Jos!" said Mr. Sedley`: nobody calls themselves
    so), or when a title that gives no sex meets a first name of the other sex in the
    pronouns the narration uses after it (`Professor Maxon … he` is no Virginia). `names`:
    everyone the cast found, each counted on its own in one pronoun pass, done when first
    needed."""
    from bookmarks.stories.cast_names import SHORT_FORMS
    from bookmarks.stories.speakers import FIRST_NAMES, TITLE_GENDER, _core, pronoun_votes

    said: dict[str, list[str]] = {}  # name → the quotations tagged with it
    for p in paras:
        for i, q in enumerate(p.quotes):
            for tag in (p.after[i], p.before[i]):
                if tag and (name := display_name(tag.subject, checker, nouns)):
                    said.setdefault(name, []).append(q.text)
    votes: dict[str, Counter] = {}

    def apart(name: str, head: str) -> bool:
        title, core = _core(name)
        head_title, head_core = _core(head)
        if title is None or not core < head_core:
            return False
        extra = [w for w in head.replace(".", "").split()
                 if w.casefold() not in core and w.casefold() != head_title and w[:1].isupper()]
        if not extra:
            return False
        calls = {f for w in extra for f in (w, *(s.capitalize() for s in SHORT_FORMS.get(w.casefold(), ())))}
        pattern = re.compile(r"(?<![\w’'-])(?:" + "|".join(map(re.escape, calls)) + r")(?![\w’'-])")
        if any(pattern.search(q) for q in said.get(name, [])):
            return True
        if TITLE_GENDER.get(title):
            return False
        if not votes:
            votes.update(pronoun_votes(clean(narration), {n: n for n in {*said, *names}}) or {"": Counter()})
        own = _decided(votes.get(name))
        theirs = votes.get(head, Counter()) + votes.get(extra[0], Counter())  # (and `Virginia` alone)
        sex = FIRST_NAMES.get(extra[0].casefold()) or (theirs.most_common(1)[0][0] if theirs else None)
        return bool(sex and own and own != sex)

    return apart


def _decided(count) -> str | None:
    """The sex the pronouns after someone's name agree on (two or more, 60%), or None."""
    if not count:
        return None
    top, n = count.most_common(1)[0]
    return top if n >= 2 and n >= 0.6 * sum(count.values()) else None
