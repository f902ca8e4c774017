"""Turn-taking in a running exchange, for the stricter speaker rules (mixed into
`attribution_rules.StrictResolver` before `attribute.Resolver`):

- **Narration between turns.** A short narration paragraph between two lines of an
  exchange of two keeps the exchange when it brings nobody else in: one that only sets the
  scene (`This was invitation enough.`) lets the alternation go on; one where the one whose
  turn it was answers in reported speech or by a gesture (`He expressed his regret.`, `Mr.
  Hale made no answer.`, `She nodded.`) is that one's turn, so the next untagged line is
  the other's. Any other action of theirs (`Miss Lane seemed interested.`) leaves the next
  line unsure.
- **Who is spoken to.** A speaker's line or narration that names the one listener (`She was
  talking to Mr. Hale`, `he said to his son`) makes the two an exchange, so an untagged
  reply right after is the listener's.
- **Vocatives.** An untagged line that calls X by name, in an exchange of X and one other
  speaker with nobody else named since, is the other's, whoever spoke last; a title or
  `dear` before the name (`Miss Lucy:`, `my dear Mr. Hale!`) still makes it a call.
Where they are unsure, the line stays narration.
"""

from __future__ import annotations

import re

from bookmarks.stories.attribute import _NESTED
from bookmarks.stories.attribution_context import blank_quotes, listeners, main_subjects, pronoun_gender
from bookmarks.stories.tags import GESTURES, PERSON_NOUNS, STOP_WORDS, TITLES, VERB, mask_abbreviations

_NAME_ONLY = re.compile(rf"\W*(?:(?:{TITLES})\.?\s+)?[A-Z][a-z]+(?:\s+[A-Z][a-z]+){{0,2}}[.!?]*\W*")


def name_only(text: str) -> bool:
    """A line that is only a name (`"Bingley."`, `"Miss Elizabeth Bennet."`): an answer that
    names someone, no call to them."""
    return _NAME_ONLY.fullmatch(text) is not None


SCENE_TALK = 12  # paragraphs before and after a run of bare lines where only its two may speak
BRIDGE_WORDS = 40  # narration this long or shorter may sit between two turns
_NOUNS = "|".join(sorted(PERSON_NOUNS))
_A_PERSON = re.compile(rf"\b(?:{_NOUNS})$", re.I)  # a subject that is a person (`The girl`)
_PERSON_WORD = re.compile(rf"\b(?:{_NOUNS})s?\b")  # a person named by a noun (`girl`, `men`)
_ASKED_HIM = re.compile(r"\b(?:asked|told|answered|questioned|(?:said|called|whispered|cried|replied)"
                        r"\s+to)\s+(him|her)(?=\s*(?:[,.;:!?—–-]|with\b|without\b|as\b|and\b|$))")
# `broke into a gentle laugh`, `broke into tears`: a doing that may lead into a line, no answer
_LAUGHED = (r"broke\s+into\s+(?:an?\s+)?(?:[a-z]+\s+)?"
            r"(?:tears|sobs|laugh|laughter|smile|grin|giggles?|wails?)\b")
# `She returned his look interrogatively.`: a gesture back, no answer
_RETURNED_LOOK = (r"returned\s+(?:his|her|their|the|my|a)\s+(?:[a-z]+\s+)?(?:look|gaze|glance|stare|"
                  r"smile|bow|nod|salute|greeting|kiss|pressure|embrace)")
_ANSWER = re.compile(rf"\b(?!returned\s+to\b|{_RETURNED_LOOK}|{_LAUGHED}|{GESTURES})"  # not `returned to`
                     rf"(?:{VERB}|expressed|assented|accepted|apologi[sz]ed|thanked|denied|"
                     r"made\s+no\s+(?:answer|reply)|did\s+not\s+(?:answer|"
                     r"reply)|was\s+silent|said\s+nothing)\b")
_GESTURE = re.compile(r"\b(?:nodded|bowed|smiled|laughed|shrugged|sighed|frowned|grinned|"
                      r"shook\s+(?:his|her)\s+head)\b")  # an answer, or a lead into a line
_N = r"(?:a|one|two|three|four|five|six|some|a\s+few|several|many|\w+teen|twenty)"
_TIME_MOVES = re.compile(  # narration that moves the story on in time
    rf"\b(?:{_N}\s+(?:or\s+{_N}\s+)?(?:minutes?|hours?|days?|weeks?|months?|years?)\s+(?:later|afterwards?)|"
    r"(?:the\s+)?(?:next|following)\s+(?:morning|day|evening|night|week|month|year)|"
    r"shortly\s+after(?:wards|\s+this|\s+that)?|some\s+time\s+(?:after|later))\b", re.I)
_NEWCOMERS = re.compile(  # people the text does not name come in: the talk of two is over
    r"\b(?:(?:an?|two|three|several|some|other)\s+(?:[a-z-]+\s+){0,2}?(?:strangers?|men|women|man|woman|"
    r"gentlemen|gentleman|persons?|people|visitors?)\s+(?:\w+\s+)?(?:entered|came\s+in|walked\s+in|"
    r"were\s+shown\s+in|was\s+shown\s+in|appeared))\b", re.I)
_CALL = re.compile(rf"(?:^|[,;!?.—–-]\s*|\b(?:[Mm]y\s+)?(?:[Dd]ear(?:est)?|[Oo]h?)\s+"
                   rf"|(?:^|[,;!?.—–-]\s*)[Yy]ou(?:[’']re|\s+are)\s+(?:only\s+|really\s+|not\s+)?)"
                   rf"(?:(?:{TITLES})\.?\s+)?$")  # (`"Oh—you're Jordan Baker."`: said to her)


_VOCATIVE = re.compile(rf"(?:^|[,;!?.—–-]\s*|\b(?:[Mm]y\s+)?(?:[Dd]ear(?:est)?|[Oo]h?)\s+)"
                       rf"(?:(?:{TITLES})\.?\s+)?(?P<n>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)(?=\s*[,!?.;:—–-]|$)")
# a call to a group (`"Well, gentlemen, …"`): the line speaks to the two who spoke before it
_GROUP_CALL = re.compile(r"(?:^|[,;!?.—–-]\s*)(?:[Mm]y\s+)?(?:[Dd]ear\s+|[Gg]ood\s+)?(?:gentlemen|ladies|"
                         r"boys|girls|children|lads|fellows|friends|comrades|sirs|you\s+two|both\s+of\s+you)"
                         r"(?=\s*[,;!?.—–-])")
_KIN_CALLS = frozenset("Papa Pa Mamma Mama Ma Mother Father Daddy Mammy Mummy Granny Grandma Grandpa "
                       "Sir Madam Ma’am Miss Uncle Aunt Auntie Nurse Doctor Captain Boy Girl Child "
                       "Brother Sister Cousin Master Mistress Darling Dearest Love Friend".split())


_KIN = ("(?:wife|lady|husband|sister|brother|mother|father|daughter|son|aunt|uncle|niece|nephew|"
        "cousin|friend|companion|guest|visitor)")

# `spoke to the armed guard outside`, `said he to a porter`: one the cast does not know is spoken
# to. Found from the person (`to the armed guard`, rare and quick to find) back to the verb just
# before it, which is looked for only there: trying the verbs at every word of every narration
# paragraph took about a millisecond a paragraph on a novel
_TO_PERSON = re.compile(rf"(?<=\s)to\s+((?:the|an?)\s+(?:[a-z-]+\s+){{0,2}}?(?:{_NOUNS}))\b(?![’'-])",
                        re.I)
_SPOKEN = re.compile(rf"\b(?:{VERB}|spoke|spoken|speaking|turn(?:ed|ing)|call(?:ed|ing))\s+(?:\w+\s+)?\Z",
                     re.I)
_SPOKEN_REACH = 120  # characters before `to` the verb and the word between may take


_TO_KIN = re.compile(rf"\b(?:{VERB}|turn(?:ed|ing)|look(?:ed|ing)|glanc(?:ed|ing))\s+(?:[\w.’']+\s+){{0,3}}?"
                     rf"to\s+((?:his|her)\s+(?:[a-z]+\s+)?{_KIN})\b(?![’'-])")  # not `gone to his aunt’s`


_TO_A = re.compile(r"\bto\s+(?:the|an?)\s", re.I)


def to_someone(cast, text: str) -> bool:
    """Whether narration has a line spoken to a person the cast does not know (`spoke to the
    armed guard outside`)."""
    if not _TO_A.search(text):
        return False  # (what `_TO_PERSON` needs, found fast: most narration has none)
    return any(_SPOKEN.search(text, max(0, m.start() - _SPOKEN_REACH), m.start())
               and cast.lookup(m.group(1)) is None for m in _TO_PERSON.finditer(text))


class TurnRules:
    bridge = -1  # a narration paragraph the exchange goes on across

    def addressed(self, text: str) -> set[str]:
        """Characters a quotation calls by name: at its start or after a comma, a dash, `dear`
        or `oh`, a title allowed (`"Miss Lucy: you will …"`), and followed by a stop."""
        return calls(self.cast, text)

    def turn(self, pi: int, p) -> str | None:
        who = self._turn(pi, p)
        if who and who in listeners(blank_quotes(p), self.cast.mentions(blank_quotes(p))):
            return None  # `"…," he observed to the Mole`: the turn would give it to the Mole
        subjects = {t.subject.casefold() for t in [*p.after, *p.before] if t}
        if who and (subjects & {"they", "we"} or "it" in subjects and "n" not in self.cast.gender(who)):
            return None  # `"…," it said` / `they said`: not the one whose turn it was
        if who and len(set(self.recent[-2:])) == 2 and any(
                _GROUP_CALL.search(_NESTED.sub(" ", q.text)) for q in p.quotes if q.speech):
            # `"Well, gentlemen, if you like …"` after Sir Henry and the captain: a third
            # speaks to both — the narrator, where one tells the story and was not of the two
            return self.narrator if self.narrator and self.narrator not in self.recent[-2:] else None
        return who

    def _calls_another(self, pi: int, who: str) -> bool:
        """Whether paragraph pi's speech calls another character the text knows by name."""
        person = self.cast.people.get(who)
        if person and any(re.match(r"(?:[Tt]he|[Aa]n?|[Hh]is|[Hh]er)\s+[a-z]", f) for f in person.forms):
            return False  # `the painter` may be the Basil called
        forms = {w for f in (person.forms if person else {who}) for w in f.replace(".", "").split()}
        p = self.paras[pi]
        last = next((n for n in reversed(p.speakers) if n), None)
        for q, n in zip(p.quotes, p.speakers, strict=True):
            if not q.speech or n != last or name_only(q.text):
                continue  # an earlier speaker's call was answered in the paragraph; `"Emerson."`
            text = _NESTED.sub(lambda m: " " * len(m.group(0)), q.text)  # another's words
            for m in _VOCATIVE.finditer(mask_abbreviations(text).replace("\u2024", " ")):
                name = m.group("n")
                if name.casefold() in STOP_WORDS or name in _KIN_CALLS or name == "I":
                    continue
                known = self.cast.lookup(name)  # an unknown name may be the other's nickname
                if known and known != who and not set(name.split()) <= forms:
                    return True
        return False

    def _turn(self, pi: int, p) -> str | None:
        if self.bridge == pi - 1 and pi and not any(self.paras[pi - 1].speakers):
            saved, self.took_turn = self.took_turn, pi - 1  # the exchange goes on across it
            try:
                who = super().turn(pi, p)
            finally:
                self.took_turn = saved
            return who or self.vocative(pi, p)
        return super().turn(pi, p)

    def update_exchange(self, p, speech: list[int]) -> None:
        pi = self.at(p)
        said = [s for s in p.speakers if s]
        if said or speech or p.quotes:
            before = list(self.recent)
            self._slot(pi, said, before)
            super().update_exchange(p, speech)
            if said and len(self.recent) == 1 and (heard := self._listener(pi, said[-1])):
                self.recent.insert(0, heard)  # `She was talking to Mr. Hale.`: the two talk
            elif said and len(self.recent) == 1 and self._with_narrator(pi, said[-1]):
                self.recent.insert(0, self.narrator)  # `"Sit down," said he.` to "I", alone
            elif said and len(self.recent) >= 2 and (heard := self._listener(pi, said[-1], calls=False)) \
                    and heard != self.recent[-2]:
                self.recent = [heard, said[-1]]  # `X turned to Harriet. "…?"`: Harriet answers
            elif said and to_someone(self.cast, blank_quotes(p)):
                self.recent = [said[-1]]  # `"…?" he asked a porter`: the porter may answer
            elif said and (m := _TO_KIN.search(blank_quotes(p))):
                kin = self.cast.lookup(m.group(1))  # `turning to his nephew`: the nephew the text knows
                # `said Mrs. Grey to her husband`, who is not named: the next line is unsure
                self.recent = [kin, said[-1]] if kin and kin != said[-1] else [said[-1]]
            elif said and len(self.recent) > 2 and before and self.recent[-2] == before[-1] \
                    and said == [self.recent[-1]] and self._called(pi - 1, said[-1]):
                self.recent = self.recent[-2:]  # `"No, Lucy, …"` ¶ `"…," said Lucy.`: those two
            return
        if _TIME_MOVES.search(p.text) or _NEWCOMERS.search(p.text):
            self.recent = []  # `Shortly after this I had to go out of town.`, `two strangers
            # entered`: the talk is over
            return
        if to_someone(self.cast, blank_quotes(p)):
            self.recent = []  # `The Thinking Machine spoke to the armed guard outside.`
            return
        if any(_A_PERSON.search(subject) and self.cast.lookup(subject) is None
               for _, subject in main_subjects(blank_quotes(p))):
            self.recent = []  # `The girl was stealing down!`: someone the cast does not know
            return  # comes in, and a `she` may be her
        if not self.recent or len(p.text.split()) > BRIDGE_WORDS \
                or not pi or not any(self.paras[pi - 1].speakers):
            super().update_exchange(p, speech)
            return
        if len(self.recent) == 1:  # `Mr. Crowe replied that he would walk.`: the second of two
            subjects = [n for n in self._subjects(p, set(self.cast.people)) if n != self.recent[-1]]
            if len(subjects) == 1 and _ANSWER.search(p.text) and not self._strangers(p, {*subjects,
                                                                                       *self.recent}):
                self.recent.append(subjects[0])
                self.took_turn = pi
                return
            super().update_exchange(p, speech)
            return
        last, other = self.recent[-1], self.recent[-2]
        if not p.quotes and re.fullmatch(r"\s*\([^()]+\)\s*", p.text):
            self.bridge = pi  # `(Why was she thinking of Stewart Snyder?)`: an aside; the talk goes on
            return
        named = {n for _, _, n, _ in self.cast.mentions(p.text)}
        if named - {last, other}:
            super().update_exchange(p, speech)  # someone else comes in
            return
        referred = self._referred(p, {last, other})
        if not named and referred == set() and not self._strangers(p, set()):
            self.bridge = pi  # `This was invitation enough.`: the turns go on
            return
        subjects = self._subjects(p, {last, other})
        answer = _ANSWER.search(blank_quotes(p)) or (subjects == [self.narrator] and _GESTURE.search(p.text))
        # `I nodded.`: the narrator's answer (their doings lead into no line of theirs)
        if subjects == [other] and answer:
            self.recent.append(other)  # `He expressed his regret.`: the other's turn
            self.took_turn = pi
        elif subjects == [last] and answer:
            self.bridge = pi  # the last speaker says a little more: still the other's turn
        # else `Miss Lane seemed interested.`: who speaks next is unsure (no turn is given)

    # --- who a description is ------------------------------------------------------------

    def _slot(self, pi: int, said: list[str], before: list[str]) -> None:
        """Note a speaker met in the turn of another in an exchange of two (`"…," asked Mr.
        Lee` ¶ `"…," replied the servant` where Poole's turn was); and who can be told apart
        (a line that calls the other by name). Two names in one paragraph tell nothing:
        `"…," Poole said to her … "And now," continued the butler` is one man."""
        if not hasattr(self, "slots"):
            self.slots: dict[tuple[str, str], int] = {}
            self.apart: set[frozenset[str]] = set()
            self.seen_as: dict[str, str] = {}  # a description already met in someone's turn
        p = self.paras[pi]
        names = set(said)
        for q, s, how in zip(p.quotes, p.speakers, p.how, strict=True):
            if s and q.speech and how.startswith(("after:", "before:")):  # a turn may be wrong
                for n in self.addressed(q.text):
                    self.apart.add(frozenset((s, n)))
        tagged, before_tagged = self._tagged(pi), self._tagged(pi - 1) if pi else set()
        for s in tagged:  # two tagged speakers one after the other are two people
            for t in (tagged | before_tagged) - {s}:
                self.apart.add(frozenset((s, t)))
        if len(names) != 1 or len(before) < 2 or not pi or not any(self.paras[pi - 1].speakers) \
                or not p.quotes or p.text[:p.quotes[0].start].strip():
            return  # only a paragraph that opens with its speech takes a turn plainly
        last = next((x for x in reversed(self.paras[pi - 1].speakers) if x), None)
        before = [self.seen_as.get(x, x) for x in before]
        s, a, b = said[0], before[-1], before[-2]
        if self.seen_as.get(last, last) == a and b != a and s not in (a, b) \
                and (len(before) == 2 or before[-3] == a) \
                and not (self.cast.gender(s) and self.cast.gender(b)
                         and not self.cast.gender(s) & self.cast.gender(b)):
            self.slots[(s, b)] = self.slots.get((s, b), 0) + 1
            self.seen_as.setdefault(s, b)

    def slot_merges(self, described) -> dict[str, str]:
        """{description-only character: the named one whose turns it takes}, twice or more,
        when the text never shows them apart and the description takes no one else's turns."""
        slots = getattr(self, "slots", {})
        pairs: dict[str, set[str]] = {}
        for (s, b) in slots:
            d, n = (s, b) if described(self.cast, s) else (b, s)
            if described(self.cast, d) and not described(self.cast, n) \
                    and frozenset((d, n)) not in self.apart:
                pairs.setdefault(d, set()).add(n)
        return {d: next(iter(ns)) for d, ns in pairs.items()
                if len(ns) == 1 and slots.get((d, next(iter(ns))), 0) >= 2}

    # --- helpers -------------------------------------------------------------------------

    def _tagged(self, pi: int) -> set[str]:
        """The speakers a paragraph's speech tags name (`said the maltster`, `Oak said`)."""
        p = self.paras[pi]
        return {s for q, s, how in zip(p.quotes, p.speakers, p.how, strict=True)
                if s and q.speech and how.startswith(("after:", "before:"))}

    def _strangers(self, p, known: set[str]) -> bool:
        """Whether the paragraph names someone the rules cannot place: a name that is none of
        `known`'s, or a person described (`the doctor came in`, `the maid wept`)."""
        text = p.text
        for start, end, name, _ in self.cast.mentions(text):
            if name in known:
                text = text[:start] + " " * (end - start) + text[end:]
        for m in re.finditer(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+)", mask_abbreviations(text)):
            if m.group(1) != "I" and self.cast.checker.is_name_word(m.group(1)):
                return True
        return bool(_PERSON_WORD.search(text))

    def _referred(self, p, pair: set[str]) -> set[str] | None:
        """The pair members a narration paragraph refers to by `he`/`she` (the one of that
        gender); None when a pronoun fits neither or both."""
        people: set[str] = set()
        if self.narrator in pair and re.search(r"\b(?:I|me|my)\b", blank_quotes(p)):
            people.add(self.narrator)  # `I nodded.`: the narrator's answer
        for word in re.findall(r"\b(?:he|she|him|his|her)\b", p.text, re.I):
            g = "m" if word.casefold() in ("he", "him", "his") else "f"
            fits = {n for n in pair if g in self.cast.gender(n)}
            if len(fits) != 1:
                return None
            people |= fits
        return people

    def _subjects(self, p, pair: set[str]) -> list[str]:
        """The pair members who are the main subjects of the paragraph's sentences."""
        out: list[str] = []
        for _, subject in reversed(main_subjects(p.text)):
            if subject == "I":
                who = self.narrator
            elif (g := pronoun_gender(subject)) in ("m", "f"):
                fits = [n for n in pair if g in self.cast.gender(n)]
                who = fits[0] if len(fits) == 1 else None
            else:
                who = self.cast.lookup(subject)
            if who in pair and who not in out:
                out.append(who)
        return out

    def _called(self, pi: int, name: str) -> bool:
        """Whether paragraph pi's speech calls `name` by name."""
        return pi >= 0 and any(name in self.addressed(q.text) for q in self.paras[pi].quotes if q.speech)

    def _with_narrator(self, pi: int, speaker: str) -> bool:
        """A first-person narrator alone with `speaker`: the scene (the chapter's last
        paragraphs, see `_scene_people`) names no one else and knows no stranger, and its
        narration says "I" just before — so the one spoken to, and the one who answers, is
        the narrator."""
        if not self.narrator or speaker == self.narrator or not pi \
                or not (people := self._scene_people(pi)) or people[0] - {self.narrator} != {speaker}:
            return False
        here = [self.paras[k] for k in range(max(0, pi - 2), pi + 1)
                if self.paras[k].chapter == self.paras[pi].chapter]
        return any(re.search(r"\b(?:I|me|my)\b", blank_quotes(x)) for x in here)

    def _listener(self, pi: int, speaker: str, calls: bool = True) -> str | None:
        """The one character the paragraph names as spoken to, other than the speaker: in
        its narration (`turned to Harriet`), else (`calls`) by a call in its speech."""
        p = self.paras[pi]
        text = blank_quotes(p)
        heard = listeners(text, self.cast.mentions(text), to_only=not calls) - {speaker}
        if not heard and (m := re.search(r"\bto\s+(?:his|her)\s+(wife|lady|husband)\b", text)) \
                and (spouse := self._spouse(speaker, m.group(1))):
            heard = {spouse}  # `said Mrs. Grey to her husband`: Mr. Grey
        if not heard and calls:  # the narration's `turned to Harriet` before a call of `Miss Grey`
            heard = {n for q in p.quotes if q.speech for n in self.addressed(q.text)} - {speaker}
        if not heard and pi and (m := _ASKED_HIM.search(text)) and not self.paras[pi - 1].quotes \
                and self.paras[pi - 1].chapter == p.chapter:  # `… overtaken by Robert.` ¶ `"…?"
            sex = "m" if m.group(1) == "him" else "f"  # she asked him`: Robert, the one man there
            prev = blank_quotes(self.paras[pi - 1])
            heard = {n for _, _, n, _ in self.cast.mentions(prev) if self.cast.gender(n) == {sex}} - {speaker}
        return heard.pop() if len(heard) == 1 else None


def _bare_speech(p) -> bool:
    """A paragraph that is speech only: quotations and nothing else but stray punctuation."""
    if not p.quotes or not all(q.speech for q in p.quotes):
        return False
    return not any(re.search(r"\w", p.seg(k)) for k in range(len(p.segs)))


def fill_between(paras, cast) -> None:
    """Counting turns back from the next tagged line: `"…," said Jeeves.` ¶ `"…"` ¶ `"…"`
    ¶ `"…," I said.` — a run of bare lines (speech only, nobody placed) between a line of A
    and a line of B that opens its paragraph and is tagged, with nothing between, alternates
    A B A B when the count fits (an even run: A, B, …, A, B). Nobody else may speak in the
    SCENE_TALK paragraphs around, and the run must name no third speaker nor call one of the
    two by the name it would then give them; else it stays narration."""
    k = 0
    while k < len(paras):
        if not (_bare_speech(paras[k]) and not any(paras[k].speakers)):
            k += 1
            continue
        j = k
        while j + 1 < len(paras) and _bare_speech(paras[j + 1]) and not any(paras[j + 1].speakers) \
                and paras[j + 1].chapter == paras[k].chapter:
            j += 1
        _fill(paras, cast, k, j)
        k = j + 1


def _fill(paras, cast, k: int, j: int) -> None:
    if not k or j + 1 >= len(paras):
        return
    prev, nxt = paras[k - 1], paras[j + 1]
    if not nxt.quotes and j + 2 < len(paras) and _introduces(nxt, paras[j + 2]):
        nxt = paras[j + 2]  # `An uncomfortable pause. Then Tom said:` ¶ `"…"`: no turn between
    if prev.chapter != paras[k].chapter or nxt.chapter != paras[k].chapter or not nxt.quotes:
        return
    a = next((s for s in reversed(prev.speakers) if s), None)
    b = nxt.speakers[0] if nxt.speakers else None
    if not a or not b or nxt.text[:nxt.quotes[0].start].strip() \
            or not nxt.how[0].startswith(("after:", "before:", "introduced")):
        return  # B's line must open its paragraph with a tag of its own (not a turn)
    if a == b:  # `"…," said Tom.` … `Then Tom said:`: the one other who talks in this scene
        others = {s for n in _scene(paras, k, j) for s in paras[n].speakers if s} - {a}
        if len(others) != 1:
            return
        b = others.pop()
        if (j - k + 1) % 2 == 0:
            return
        turns = [a if (n - k) % 2 else b for n in range(k, j + 1)]
        _give(paras, cast, k, j, a, b, turns)
        return
    if (j - k + 1) % 2:
        return
    around = range(max(0, k - SCENE_TALK), min(len(paras), j + 2 + SCENE_TALK))
    if {s for n in around if paras[n].chapter == paras[k].chapter
            for s in paras[n].speakers if s} - {a, b}:
        return  # a third speaks near: the count may skip them
    turns = [a if (n - k) % 2 else b for n in range(k, j + 1)]
    _give(paras, cast, k, j, a, b, turns)


def _scene(paras, k: int, j: int) -> list[int]:
    """The paragraphs around k..j up to SCENE_TALK away on either side, not across a
    chapter break nor a narration paragraph longer than BRIDGE_WORDS (the scene moves on)."""
    out = []
    for step, start in ((-1, k - 1), (1, j + 1)):
        n = start
        while 0 <= n < len(paras) and abs(n - start) < SCENE_TALK and paras[n].chapter == paras[k].chapter \
                and (paras[n].quotes or len(paras[n].text.split()) <= BRIDGE_WORDS):
            out.append(n)
            n += step
    return out


def _introduces(p, nxt) -> bool:
    """A short narration paragraph that ends by introducing the next one's line."""
    return len(p.text.split()) <= BRIDGE_WORDS and bool(nxt.how) and nxt.how[0] == "introduced" \
        and re.search(r":\s*[—–-]*$", p.text.rstrip()) is not None


def _give(paras, cast, k: int, j: int, a: str, b: str, turns: list[str]) -> None:
    for n, who in zip(range(k, j + 1), turns, strict=True):
        text = " ".join(q.text for q in paras[n].quotes)
        named = {name for _, _, name, _ in cast.mentions(text)}
        if named & cast.speakers - {a, b}:
            return  # `"Ask Jeeves."`: a third may be there
        if who in calls(cast, text):
            return  # the count would give a line to the one it calls
    for n, who in zip(range(k, j + 1), turns, strict=True):
        paras[n].speakers = [who] * len(paras[n].quotes)
        paras[n].how = ["between"] * len(paras[n].quotes)


def calls(cast, text: str) -> set[str]:
    """Characters a quotation calls by name (see `TurnRules.addressed`)."""
    out = set()
    text = _NESTED.sub(lambda m: " " * len(m.group(0)), text)  # `‘…, Mr. Hallward?’ she said`
    for start, end, name, _ in cast.mentions(text):
        before, after = text[:start].rstrip(), text[end:end + 2]
        if _CALL.search(before + (" " if before else "")) and (not after or after[:1] in ",!?.;:—–-"):
            out.add(name)
    return out
