"""Who speaks each quotation of a prose text, by rules a reader uses (no model).

For each quotation, in order:

1. a speech tag after it (`"…," said the Hatter`, `"…," she remarked`) or before it
   (`Harker said, "…"`, `The King laid his hand on her arm, and timidly said "…"`);
2. the speaker of the quotation before it in the paragraph, when only that one's tag stands
   between them (`"I think," said he, "that it is so."`);
3. the subject of the sentence of action right before it (`The Time Traveller smiled. "…"`);
4. for a paragraph's first quotation: the speech the paragraph before left open, or a
   narration paragraph that ends by introducing it (`Then Ben Rogers says:`);
5. turn-taking: an untagged paragraph in a two-person exchange goes to the one who spoke
   before last — unless it names that person as the one addressed (a vocative), and the
   exchange ends at narration that brings in someone else.

Names are resolved through the cast (`speakers.py`); `he`/`she`/`it` to the most recent
character of that gender — the paragraph's own subjects first, then the speakers and
subjects of the paragraphs before — and left unresolved when someone of unknown gender
stands closer; `I` to the first-person narrator, named when the text names them
("my name is …"), else "Narrator". Where the rules are unsure the quotation stays narration.
"""

from __future__ import annotations

import re
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

from bookmarks.stories.attribution_context import appositives, blank_quotes
from bookmarks.stories.cast_names import SHORT_FORMS
from bookmarks.stories.cast_people import (
    TITLE_WORD,
    described_speakers,
    full_names,
    named_persons,
    surnamed_persons,
    told_apart,
)
from bookmarks.stories.names import one_of
from bookmarks.stories.quotes import Quote, find_quotes, mark_scare_quotes
from bookmarks.stories.speakers import (
    FEMALE,
    MALE,
    NEUTER,
    TITLE_GENDER,
    WIFE_TITLES,
    NameChecker,
    Person,
    display_name,
    family_merges,
    genders,
    merge_variants,
    pronoun_votes,
    several_titled,
    titled_genders,
    titled_surnames,
)
from bookmarks.stories.tags import (
    PERSON_NOUNS,
    PROPER,
    STOP_WORDS,
    TITLES,
    Tag,
    beat,
    clean,
    open_tag_after,
    open_tag_before,
    tag_after,
    tag_before,
)

NARRATOR = "Narrator"
_KIN_WORDS = {"Father": ("Dad", "Daddy", "Papa", "Pa"),  # what a child calls the text's `Father`
              "Mother": ("Mum", "Mummy", "Mamma", "Mama", "Ma", "Mammy")}
FIRST_PERSON = "i"  # the narrator's "gender" for pronouns: `I`, never `he`/`she`
_PRONOUN_G = {"he": MALE, "she": FEMALE, "it": NEUTER}
_MY_NAME = re.compile(rf"\b(?:[Mm]y name (?:is|was)|[Cc]all me|I am called|I was called|"
                      rf"(?:they|people|everyone|everybody) call(?:ed)? me)\s+({PROPER})")
_HEADING = re.compile(r"[^.!?:;]{1,60}")  # a title, by-line or chapter heading: no sentence
LOOKBACK = 3  # paragraphs searched back for a pronoun's antecedent


@dataclass
class Para:
    line: int
    text: str
    chapter: str | None
    quotes: list[Quote]
    segs: list[tuple[int, int]]  # narration spans: before quote 0, between, after the last
    after: list[Tag | None] = field(default_factory=list)  # tag after quote i (seg i+1)
    before: list[Tag | None] = field(default_factory=list)  # tag before quote i (seg i)
    speakers: list[str | None] = field(default_factory=list)
    how: list[str] = field(default_factory=list)  # the rule that gave each speaker
    mentions: list[tuple[int, str, bool]] = field(default_factory=list)  # (pos, name, subject)

    def seg(self, i: int) -> str:
        return self.text[self.segs[i][0]:self.segs[i][1]]


def _opens_sentence(before: str) -> bool:
    """A quotation after this narration starts a sentence (not `the word "liberality,"`)."""
    return not before.strip() or bool(re.search(r"[.!?:;—–\-”\"’']\s*$", before))


def _read(paragraphs: list[tuple[int, str, str | None]], style: str) -> list[Para]:
    out: list[Para] = []
    open_before = False
    for line, text, chapter in paragraphs:
        quotes = find_quotes(text, style, open_before)
        bounds = [0, *[b for q in quotes for b in (q.start, q.end)], len(text)]
        segs = [(bounds[k], bounds[k + 1]) for k in range(0, len(bounds), 2)]
        p = Para(line, text, chapter, quotes, segs)
        p.after = [tag_after(p.seg(i + 1)) or (open_tag_after(quotes[i].text, p.seg(i + 1))
                                                if _opens_sentence(p.seg(i)) else None)
                   for i in range(len(quotes))]
        if quotes and (t := p.after[-1]) and re.search(r"[.!?]\W*$", quotes[-1].text) \
                and re.fullmatch(r"[\s:]*:[\s—–-]*", clean(p.seg(len(quotes)))[t.end:]):
            p.after[-1] = None  # `"…." But Phyllis said:—` speaks the next paragraph
        p.before = [tag_before(p.seg(i)) or open_tag_before(p.seg(i)) for i in range(len(quotes))]
        claimed = {i for i, t in enumerate(p.before)
                   if t and t.end >= len(clean(p.seg(i)).rstrip(" ,:;—–-")) - 1}
        claimed |= {i + 1 for i in range(len(quotes) - 1) if quotes[i].speech and p.seg(i + 1).strip()
                    in ("", "or", "and", "and then")}
        claimed |= {i for i, t in enumerate(p.after) if t}  # `and then "Enfield," said Mr. Lee`
        mark_scare_quotes(text, quotes, claimed)
        if quotes:  # a speech left open goes on past inset verse without marks
            open_before = not quotes[-1].closed
        out.append(p)
    return out


_MENTIONS_KEPT = 512  # texts whose mentions a cast keeps (the paragraphs near the one at hand)


class Cast:
    """The characters found in speech tags, their variants, mentions and genders."""

    def __init__(self, paras: list[Para], checker: NameChecker, narrator: str | None,
                 narrator_forms: set[str] | None = None, merges: dict[str, str] | None = None) -> None:
        self.checker, self.narrator = checker, narrator
        self._mentioned: OrderedDict[str, tuple] = OrderedDict()  # text → its mentions (see mentions)
        seen = {(pi, k, t.subject.split()[-1]) for pi, p in enumerate(paras)
                for k, t in [*enumerate(p.after, 1), *enumerate(p.before)]  # by narration piece
                if t and re.fullmatch(r"the\s+[a-z]+", t.subject)}
        heads = Counter(noun for _, _, noun in seen)
        self.nouns = frozenset(n for n, k in heads.items() if k >= 2)  # `said the wub` twice
        found: dict[str, str] = {}  # display name → first surface form
        for p in paras:
            for tag in [*p.after, *p.before]:
                if tag and (name := display_name(tag.subject, checker, self.nouns)):
                    found.setdefault(name, tag.subject)
        for pi in range(len(paras) - 1):  # `The new boy stepped over promptly, and said:` ¶ `"…"`
            text = re.sub(r":\s*[—–-]+$", ":", paras[pi].text.rstrip())
            if not paras[pi].quotes and text.endswith(":") and paras[pi + 1].quotes \
                    and not paras[pi + 1].text[:paras[pi + 1].quotes[0].start].strip() \
                    and (tag := tag_before(text) or beat(text)) \
                    and (name := display_name(tag.subject, checker, self.nouns)):
                found.setdefault(name, tag.subject)
        for name, surface in described_speakers(paras, checker, self.nouns).items():
            found.setdefault(name, surface)  # `The strange woman spoke first.` ¶ `"…," she said.`
        told = [p for p in paras if not heading(p)]  # `My Man Jeeves`, `by Charlotte Brontë`
        found.update(full_names(told, checker, found))
        tagged = set(found)
        found.update(named_persons(told, checker, found))
        found.update(surnamed_persons(told, checker, found))
        surnames = titled_surnames("\n\n".join(p.text for p in paras))
        narration_pieces = [p.seg(k) for p in paras for k in range(len(p.segs))]
        apart = told_apart(paras, checker, self.nouns, "\n".join(narration_pieces), list(found))
        canon = merge_variants(list(found), {n for n, f in found.items() if re.match(r"[Tt]he\s", f)
                                             and not several_titled(surnames, n)}, apart)  # `the doctor`
        speaking = {canon.get(n, n) for n in tagged}  # a description goes only to a speaker
        for desc, name in appositives(narration_pieces, {n: found[n] for n in found
                                                         if canon.get(n, n) in speaking}).items():
            if desc in canon and canon.get(name, name) != desc:  # `Mr. Utterson the lawyer`
                for n, head in list(canon.items()):
                    if head == desc:
                        canon[n] = canon.get(name, name)
        for desc, name in (merges or {}).items():  # a description the dialogue shows is them
            target = canon.get(name, name)
            if target in canon.values() and target != desc:
                for n, head in list(canon.items()):
                    if head == desc:
                        canon[n] = target
        votes = self._build(paras, canon, found, tagged, narrator_forms)
        # `Mrs. Pontellier` is Edna: once the text has made Edna a woman
        if joins := family_merges(self.people, [p.text for p in paras], apart):
            joined: dict[str, Counter] = {}
            for head, count in votes.items():
                joined[joins.get(head, head)] = joined.get(joins.get(head, head), Counter()) + count
            self._build(paras, {n: joins.get(h, h) for n, h in canon.items()}, found, tagged, narrator_forms,
                        joined)
        self._pattern = re.compile(r"(?<![\w’'-])(" + one_of(self.keys) + r")(?![\w-])(?![’'][a-rt-z])") \
            if self.keys else None

    def _build(self, paras: list[Para], canon: dict[str, str], found: dict[str, str], tagged: set[str],
               narrator_forms: set[str] | None,
               votes: dict[str, Counter] | None = None) -> dict[str, Counter]:
        """The people (each head with its forms and sex), the speakers and the keys; the
        pronoun votes for each head (counted here unless given)."""
        narrator, checker = self.narrator, self.checker
        self.people: dict[str, Person] = {}
        for name, head in canon.items():
            person = self.people.setdefault(head, Person(head))
            surface = found[name]  # `Whereupon Maurice Levy` is written so, not named so
            if surface[:1].isupper() and not re.match(r"(?:The|An?|His|Her|My)\s", surface):
                surface = checker.clean(surface) or surface
            person.forms |= {name, surface}
        if narrator:
            self.people.setdefault(narrator, Person(narrator)).forms |= (narrator_forms or set())
        self.speakers = {canon.get(n, n) for n in tagged} | ({narrator} if narrator else set())
        self.keys = self._keys()
        if votes is None:
            narration = "\n".join(p.seg(i) for p in paras for i in range(len(p.segs)))
            forms = {f: k for f, k in self.keys.items() if f[:1].isupper() or f.startswith("the ")}
            votes = pronoun_votes(clean(narration), forms)
        titled = titled_genders("\n\n".join(p.text for p in paras))
        for person in self.people.values():
            person.genders = genders(person, votes.get(person.name), titled)
        men: dict[str, list[str]] = {}  # surname → the men of it named by a first name
        for person in self.people.values():
            words = person.name.split()
            if len(words) == 2 and person.genders == {"m"} and not TITLE_WORD.match(words[0]):
                men.setdefault(words[1], []).append(person.name)
        for surname, names in men.items():  # `"I shall like Mr. Clark"`: Sam Clark, the one man
            if len(names) == 1:
                for form in (f"Mr. {surname}", f"Mr {surname}"):
                    self.keys.setdefault(form, names[0])
        return votes

    def _keys(self) -> dict[str, str]:
        """Every form a character is mentioned by → the character; single name words and
        the `the X` forms where only one character fits."""
        keys: dict[str, str] = {}
        owners: dict[str, set[str]] = {}
        for person in self.people.values():
            for form in person.forms | {person.name}:
                keys[form] = person.name
                bare = re.sub(r"^(?:the|The)\s+", "", form)
                variants = [bare] if bare[:1].isupper() else [bare, bare[:1].upper() + bare[1:]]
                if not bare[:1].isupper() or person.name[:1].isupper() and " " not in bare \
                        and bare.casefold() in self.nouns | PERSON_NOUNS:
                    variants.append(bare[:1].lower() + bare[1:])  # `the Wub` / `the wub`
                for v in variants:
                    keys.setdefault(f"the {v}", person.name)
                    keys.setdefault(f"The {v}", person.name)
                words = form.replace(".", "").split()
                wife = words[0].casefold() in WIFE_TITLES  # `Mrs. Alexander Worple`: `Alexander` is
                husband = (words[1:-1] if len(words) > 2 else words[1:]) if wife else []  # her husband's,
                # and so is a bare `Hanson` beside `Mrs. Hanson`
                for word in words:
                    if word[:1].isupper() and self.checker.is_name_word(word) and word not in husband:
                        owners.setdefault(word, set()).add(person.name)
        for word, heads in owners.items():
            if len(heads) == 1 and word not in keys:
                keys[word] = next(iter(heads))
        pet: dict[str, set[str]] = {}  # `Lizzy`, `Eliza` for Elizabeth Bennet
        for word, heads in owners.items():
            for short in SHORT_FORMS.get(word.casefold(), ()):
                pet.setdefault(short.capitalize(), set()).update(heads)
        for short, heads in pet.items():
            if len(heads) == 1 and short not in keys:
                keys[short] = next(iter(heads))
        for kin, calls in _KIN_WORDS.items():  # `"You look well, Dad."` calls the one `Father`
            if kin in self.people:
                for call in calls:
                    keys.setdefault(call, kin)
        return keys

    def lookup(self, surface: str) -> str | None:
        name = display_name(surface, self.checker, self.nouns)
        if name is None:
            return None
        return self.keys.get(name) or self.keys.get(surface)

    def mentions(self, text: str) -> list[tuple[int, int, str, bool]]:
        """(start, end, character, is subject) for each mention in a piece of narration."""
        if not self._pattern:
            return []
        cache = self._mentioned  # the rules ask of the texts near the paragraph at hand again
        if (found := cache.get(text)) is not None:  # and again
            return list(found)
        out = self._mentions(text)
        cache[text] = tuple(out)
        if len(cache) > _MENTIONS_KEPT:
            cache.popitem(last=False)  # the oldest
        return out

    def _mentions(self, text: str) -> list[tuple[int, int, str, bool]]:
        out = []
        text = re.sub(r"^[A-Z]{2,}\b", lambda m: m.group(0).capitalize(), text)  # `MARILLA came`
        for m in self._pattern.finditer(clean(text)):
            before = text[max(0, m.start() - 12):m.start()]
            subject = verb_follows(text[m.end():m.end() + 80]) and not re.search(
                r"(?:\b(?:to|at|with|for|from|on|upon|by|of|than|like|into|towards|about|whether|"
                r"if)|(?<![Aa]t )\bthat)\s+$", before)
            head = text[:m.start()]
            if head.count("(") > head.count(")"):
                subject = False  # `(The Psychologist … helped himself.)`: an aside, not the chain
            name = self.keys[m.group(1)]
            if " " not in m.group(1) and (title := re.search(r"\b([A-Z][a-z]+)\.?\s+$", before)) \
                    and (sex := TITLE_GENDER.get(title.group(1).casefold())) \
                    and name != self.narrator and (gs := self.gender(name)) and sex not in gs:
                continue  # `Miss Gibson` is not Mr. Gibson, whose `Gibson` it holds
            out.append((m.start(), m.end(), name, subject))
        return out

    def gender(self, name: str) -> set[str]:
        """The third-person pronouns (m, f, n) the narration may use for `name`; a
        first-person narrator is `I` (`i`), never `he` or `she`, whatever their sex."""
        if name == self.narrator:
            return {FIRST_PERSON}
        person = self.people.get(name)
        return person.genders if person else set()


_VERBISH = frozenset("""
was were is are be been had has have did do does could would should might must will shall can
may went came took made began felt saw thought knew got gave put sat stood ran kept let found
left led held heard told brought caught fell rose spoke drew grew threw wrote rode hid bit
struck swept stole wore woke sank sang rang drank shrank swam won slid crept slept wept meant
sent spent lent bent built burnt lay laid paid said sought taught fought bound hung stuck shot
lit met fed fled read says goes gets makes takes comes sees knows thinks looks seems
""".split())


def verb_follows(after: str) -> bool:
    """Whether the words after a name read as its verb (`Alice looked`, `the Queen was`,
    `Alice hastily replied`), not as an object's context (`the Dormouse again,`)."""
    m = re.match(r"(?:(?:,[^,.;:!?“”\"]{1,60},)?\s+|—[^—.;:!?“”\"]{1,60}—\s*"  # `Ruth—she was …—came`
                 r"|\s+and\s+(?:(?:Mr|Mrs|Miss|Dr)\.?\s+|the\s+)?[A-Z][a-z’'-]+(?:\s+[A-Z][a-z’'-]+)?\s+)"
                 r"(?:(?:[a-z]+ly|not|never|just|then|also|still|only|again|at\s+once)\s+)*"
                 r"(?!and\b)([a-z][a-z’']*)(?!\w)", after)
    if not m:
        return False
    word = m.group(1)
    return word in _VERBISH or word.endswith("ed") or (word.endswith("s") and not word.endswith("ss")
                                                      and word not in ("his", "this", "its", "was"))


def heading(p: Para) -> bool:
    """A title, by-line or chapter heading (`Jane Eyre`, `by Charlotte Brontë`, `CHAPTER
    XIV`): a short paragraph with no quotation and no sentence in it — no narration."""
    return not p.quotes and bool(_HEADING.fullmatch(p.text.strip()))


def find_narrator(paras: list[Para], checker: NameChecker) -> tuple[str | None, set[str]]:
    """A first-person narrator and the forms of their name: the name the text gives ("my
    name is …", or the name the others call them by — a vocative in their speech that the
    narration never uses, since the narrator says "I"), else "Narrator"; None when the
    narration never says "I"."""
    first_person = 0
    narration, spoken = [], []
    for p in paras:
        if not heading(p):  # the title often names the narrator, whom the narration never names
            narration += [p.seg(i) for i in range(len(p.segs))]
        spoken += [q.text for q in p.quotes if q.speech]
        for i in range(len(p.segs)):
            if m := _MY_NAME.search(p.seg(i)):
                return m.group(1), {m.group(1)}
        for q in p.quotes:
            if (m := _MY_NAME.search(q.text)) and _says_i(p, q):
                return m.group(1), {m.group(1)}
    told = " ".join(narration)
    first_person = sum(1 for p in paras if not p.quotes and re.search(r"\b(?:I|my|me)\b", p.text))
    if first_person < 3:  # narration paragraphs (no quotation in them) that say "I"
        return None, set()
    called: Counter[str] = Counter()
    forms: dict[str, set[str]] = {}
    inside: set[str] = set()  # called inside a line too, not only at its start (`Listen, …`)
    for text in _spoken_to_narrator(paras):
        seen: set[str] = set()  # a name called twice in one line is one call
        for m in vocatives(text):
            word = m.group("n")
            if checker.is_name_word(word) and not re.search(rf"\b{word}\b", told) \
                    and word not in seen and word.casefold() not in STOP_WORDS:
                seen.add(word)
                called[word] += 1
                inside |= {word} if m.re is not VOCATIVES[1] else set()
                forms.setdefault(word, {word}).add(" ".join(m.group("t", "n")).strip() if m.group("t")
                                                   else word)
    called = Counter({w: n for w, n in called.items() if w in inside})
    ranked = called.most_common(2)
    if ranked and ranked[0][1] >= 2 and (len(ranked) == 1 or ranked[0][1] >= 2 * ranked[1][1]):
        word = ranked[0][0]
        return max(forms[word], key=len), forms[word]
    return NARRATOR, set()


def _spoken_to_narrator(paras: list[Para]) -> list[str]:
    """The speech that may call the narrator by name: a line next to one the narrator says
    (`I said`), an answer in a talk with them. Other speech calls others (`Cooky!` shouted
    to the cook with the narrator looking on is no name of the narrator's)."""
    out = []
    for k, p in enumerate(paras):
        near = paras[max(0, k - 1):k] + paras[k + 1:k + 2]
        to_me = re.search(r"\bme\b", blank_quotes(p))  # `"…, Nick," he advised me.`
        if to_me or any(_says_i(x, q) for x in near for q in x.quotes if q.speech):
            out += [q.text for q in p.quotes if q.speech and not _says_i(p, q)]
    return out


_T = rf"(?:(?P<t>{TITLES})\.?\s+)?"
VOCATIVES = [re.compile(rf"\b(?:[Mm]y\s+dear|[Dd]ear|[Oo]h?)\s+{_T}(?P<n>[A-Z][a-z]+)(?=\s*[,!?.])"),
             re.compile(rf"^{_T}(?P<n>[A-Z][a-z]+)\s*[,!]"),
             re.compile(rf",\s*{_T}(?P<n>[A-Z][a-z]+)\s*(?:[.!?;]|,?\s*$)"),
             re.compile(rf",\s*{_T}(?P<n>[A-Z][a-z]+),\s+(?!and\b|or\b|nor\b)[a-z]")]


def vocatives(text: str) -> list[re.Match]:
    """Names a quotation calls out to (`my dear Watson`, `Watson, come here`, `Not a bit,
    Doctor.`, `I think, Watson, that …`)."""
    return [m for pattern in VOCATIVES for m in pattern.finditer(text)]


def _says_i(p: Para, q: Quote) -> bool:
    k = p.quotes.index(q)
    tags = [p.after[k], p.before[k]]
    return any(t and t.subject == "I" for t in tags)
