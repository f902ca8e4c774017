"""Who answers whom, for the stricter speaker rules (mixed into
`attribution_rules.StrictResolver`, before the turn-taking of `attribution_turns.py`):

- **A call is answered.** The one the last line calls by name answers it (`"…, Corky," I
  said.` ¶ `"Only too glad."`), also where no two-person turn runs; an untagged line calling
  X right after an exchange of X and another is the other's.
- **A child calls papa.** `"My dearest papa!"` is the one of the last speakers who bears the
  surname of a man among them.
- **No one talks of oneself.** Neither a turn nor an answer goes to someone the line talks
  of (`Lizzy's head`, `Molly isn't`).
- **One who names oneself speaks.** `"I'm only Nancy."`, `"My name is Nancy."`: the line is
  Nancy's, whatever a pronoun or a turn gave it (not against a tag that names another).
"""

from __future__ import annotations

import re

from bookmarks.stories.attribute import LOOKBACK
from bookmarks.stories.attribution_check import pronoun_subject
from bookmarks.stories.attribution_context import blank_quotes, sentences
from bookmarks.stories.attribution_turns import name_only
from bookmarks.stories.tags import PROPER

_THIRD_PERSON = re.compile(r"[’']s\b|\s+(?:is|isn[’']t|was|wasn[’']t|has|hasn[’']t|had|does|doesn[’']t|did|"
                           r"didn[’']t|will|won[’']t|would|wouldn[’']t|can|can[’']t|could|says|said|thinks)\b")


_SELF_NAMED = re.compile(rf"(?:^|(?<=[.!?,;:—–-])|\b(?:[Nn]o|[Yy]es|[Oo]h|[Ww]hy|[Ww]ell)[,!]?)\s*"
                         rf"(?:I(?:[’']m|\s+am)\s+(?:only\s+|just\s+|called\s+)?|[Mm]y\s+name(?:[’']s|\s+is)\s+)"
                         rf"(?P<n>{PROPER})(?=\s*(?:[,;:!?.—–-]|$))")


_PARENT_CALL = re.compile(r"(?:^|[,;:!?.—–-]\s*)(?:(?:my|oh|dear|dearest)\s+)*(papa|pa|father|mamma|mama|"
                          r"mother)(?=\s*(?:[,;:!?.—–-]|$))", re.I)


def _voices(p) -> bool:
    """Speech quotations side by side, nothing between them (`“What passion!” “What an
    artist!”`): several voices."""
    return any(p.quotes[i].speech and p.quotes[i + 1].speech and not p.seg(i + 1).strip()
               for i in range(len(p.quotes) - 1))


class CallRules:
    def turn(self, pi: int, p) -> str | None:
        if _voices(p):
            return None  # `“What passion!” “What an artist!” “…”`: many voices, no one's turn
        if child := self._child_calling(pi, p):
            return child
        who = super().turn(pi, p) or self.vocative(pi, p)
        if who and pi and self._calls_another(pi - 1, who):
            # `"Good morning, Maria," said Mr. Lucas.` ¶ `"…"`: Maria's, not the turn's
            return self._answer_to_last_call(pi, p)
        if who and self._speaks_of(p, who, third=True):
            return None  # `"I beg you will not put it into Lizzy's head …"` is not Lizzy's turn
        if who:
            return who
        return self._answer_to_call(pi, p) or (self._answer_to_last_call(pi, p) if pi else None)

    def settle(self, pi: int, p, speech: list[int]) -> None:
        """`"Oh, but you've made a mistake," she faltered. "I'm only Nancy."`: a line in which
        its speaker names oneself is theirs, and so are the lines of the paragraph given to
        the same one by a pronoun, a turn or the tag they share; a tag naming someone else
        stands."""
        named = {self.cast.lookup(m.group("n")) for i in speech
                 for m in _SELF_NAMED.finditer(p.quotes[i].text)}
        me = named.pop() if len(named) == 1 else None
        wrong = {p.speakers[i] for i in speech} - {me}
        if me and not any(p.speakers[i] != me and self._named_tag(p, i) for i in speech) \
                and len(wrong - {None}) <= 1:
            for i in speech:
                if p.speakers[i] in wrong:
                    p.speakers[i], p.how[i] = me, "self-named"
            self.events[pi].append((p.quotes[speech[0]].start, me, True))
        super().settle(pi, p, speech)

    def _named_tag(self, p, i: int) -> bool:
        """The quotation's speaker comes from a tag that names them (`said Tom`, `said the
        old man`; not `she faltered`, whose `how` is the pronoun and the rule's stage)."""
        kind, _, subject = p.how[i].partition(":")
        return kind in ("after", "before", "beat") and not pronoun_subject(subject, narrator=True)

    def _child_calling(self, pi: int, p) -> str | None:
        """`"My dearest papa! You do not think I could mean you …"`: an untagged line that
        calls `papa` (`mamma`, `father`, `mother`) is the one of the last speakers who bears
        the surname of a man (woman) among them — Emma Woodhouse to Mr. Woodhouse, with Mr.
        Knightley there too."""
        if not p.quotes or any([*p.after, *p.before]) or p.text[:p.quotes[0].start].strip():
            # (no quotes: `The other replied:` introducing the next paragraph's speech)
            return None
        said = {m.group(1).casefold() for q in p.quotes if q.speech for m in _PARENT_CALL.finditer(q.text)}
        g = "m" if said and said <= {"papa", "pa", "father"} else \
            "f" if said and said <= {"mamma", "mama", "mother"} else None
        if g is None:
            return None
        people = set(self.recent[-4:]) | {s for k in range(max(0, pi - 6), pi) for s in self.paras[k].speakers
                                          if s and self.paras[k].chapter == p.chapter}
        pairs = {(parent, child) for parent in people if self.cast.gender(parent) == {g}
                 and len(words := parent.replace(".", " ").split()) >= 2 and words[-1][:1].isupper()
                 for child in people - {parent} if words[-1] in child.split()[1:]}
        if len({child for _, child in pairs}) != 1:
            return None
        self.stage = "child"
        return next(iter(pairs))[1]

    def _answer_to_last_call(self, pi: int, p) -> str | None:
        """`"…, Corky," I said. "Only too glad. Carry on, Jeeves."` ¶ `"I would suggest, sir,
        …"`: the one the last sentence of the last line calls by name answers it — one known
        speaker, not the caller; the answer opens its paragraph, untagged, calling nobody, its
        narration naming no one."""
        prev = self.paras[pi - 1]
        last = next((k for k in range(len(prev.quotes) - 1, -1, -1) if prev.quotes[k].speech), None)
        caller = prev.speakers[last] if last is not None else None
        if caller is None or not p.quotes or any([*p.after, *p.before]) \
                or p.text[:p.quotes[0].start].strip() \
                or name_only(prev.quotes[last].text):
            return None
        said = sentences(prev.quotes[last].text)  # its last sentence: `"…, Jo? Dear me!"` is to all
        called = self.addressed(said[-1][1].strip()) - {caller} if said else set()
        if len(called) != 1 or (who := next(iter(called))) not in self.cast.speakers:
            return None
        narration = " ".join(p.seg(k) for k in range(len(p.segs)))
        if self.cast.mentions(narration) or any(self.addressed(q.text) for q in p.quotes if q.speech):
            return None
        if self._speaks_of(p, who):
            return None  # `"…, Eliza."` ¶ `"I beg you will not put it into Lizzy's head …"`
        return who

    def _speaks_of(self, p, who: str, third: bool = False, own: bool = True) -> bool:
        """A line of the paragraph names `who` (one does not talk of oneself by name);
        `third`: only as someone talked about — a possessive, or the subject of `is`, `has`
        … (`Lizzy's head`, `Molly isn't`; not `I'm only Nancy`); `own` False: not where the
        line names its speaker (`I'm only Nancy`)."""
        for q in p.quotes:
            if not own and q.speech and any(self.cast.lookup(m.group("n")) == who
                                            for m in _SELF_NAMED.finditer(q.text)):
                continue
            for _, end, n, _ in self.cast.mentions(q.text) if q.speech else []:
                if n == who and (not third or _THIRD_PERSON.match(q.text[end:])):
                    return True
        return False

    def _called_replies(self, g: str, pi: int) -> str | None:
        """`"I wish you'd take that picture away, Robert," said she.` ¶ `"My dear!" he cried.`:
        with no one else for `he` near, the one man the line before calls by name (not its
        speaker) answers it — the reply opens its paragraph, whose narration names no one."""
        p = self.paras[pi]
        if not pi or (prev := self.paras[pi - 1]).chapter != p.chapter or not p.quotes \
                or p.text[:p.quotes[0].start].strip():
            return None
        called = set().union(*(self.addressed(q.text) for q in prev.quotes if q.speech)) - set(prev.speakers)
        fits = {n for n in called if self.cast.gender(n) == {g}}
        if len(fits) != 1 or len(called) > 1 or self.cast.mentions(blank_quotes(p)):
            return None
        self.stage = "called"
        return fits.pop()

    def _answer_to_call(self, pi: int, p) -> str | None:
        """`"Jeeves, we want your advice."` (whoever said it) ¶ `"Very good, sir."`: the one a
        line calls by name answers it, when the line names no one else and the answer is
        untagged, calls nobody by name and its narration names no one."""
        if not pi or (prev := self.paras[pi - 1]).chapter != p.chapter or any(prev.speakers) \
                or any([*p.after, *p.before]) or not any(q.speech for q in prev.quotes):
            return None
        lines = [q.text for q in prev.quotes if q.speech and not name_only(q.text)]
        called = set().union(*(self.addressed(t) for t in lines))  # (`"Bingley."` is an answer)
        if len(called) != 1 or (who := next(iter(called))) not in self.cast.speakers \
                or {n for t in lines for _, _, n, _ in self.cast.mentions(t)} != {who}:
            return None  # `"Lucy, dearest, let Mr. Beebe eat his dinner."`: he may answer
        narration = " ".join(p.seg(k) for k in range(len(p.segs)))
        if self.cast.mentions(narration) or any(self.addressed(q.text) for q in p.quotes if q.speech):
            return None
        if {n for _, _, n, _ in self.cast.mentions(blank_quotes(prev))} - {who} or self._speaks_of(p, who):
            return None  # `"X, …," Mr. Y said to Z`: the narration names another
        return who

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
        if len(spoke) == 2 and spoke[1] == listener and self.recent[-2:] == [listener, spoke[0]] \
                and self._alone(pi, set(spoke)):
            return spoke[0]  # the two alone, and the last speaker calls the other again
        return None  # `"Nell, …"` right after Tom, or a third near: Tom again, or someone new
