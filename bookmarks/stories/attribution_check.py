"""Which attributed lines a writer should check first.

The rules give each quotation a speaker by one of several kinds of evidence (`Para.how`).
They are not equally sure: measured on the gold sets the rules were built on and on the
diagnostic sets (`python benchmarks/attribution_accuracy.py` prints it per split), a tag that names the
speaker (`said Anna`, `the old man answered`, the narrator's `I said`) is right about 95% of
the time, a pronoun tag (`she said`) or turn-taking in an untagged exchange about 89%, the
other kinds less. A line the rules attributed without a naming tag carries the reason in
`Action.check`; the Library lists those lines (*lines to check*) so that a writer can read
them first and correct the wrong ones. A writer's correction clears the mark.
"""

from __future__ import annotations

import re

from bookmarks.stories.names import one_of

# a tag's subject in `Para.how` is the speaker's name or description, or a pronoun with the
# stage of the search that resolved it glued on (`after:Hechain`, see `Resolver.resolve`)
_STAGES = (r"(?:anaphor|back|called|carried|chain|child|exchange|led|listener|mention|named"
           r"|relation|reply|sole|subject|unsure)?")
_PRONOUN = re.compile(rf"(?:[Hh]e|[Ss]he|[Ii]t|[Tt]hey|[Ww]e){_STAGES}")
_NARRATOR = re.compile(rf"I{_STAGES}")


def pronoun_subject(subject: str, narrator: bool = False) -> bool:
    """A tag subject of `how` that is a pronoun (`he`, `Hechain`; with `narrator`, also the
    narrator's `I`) rather than a name (`Hector`, `Ivan`)."""
    return bool(_PRONOUN.fullmatch(subject) or narrator and _NARRATOR.fullmatch(subject))
_FOLLOWS = ("same", "resumed", "inherit")  # the quotation before's speaker, in one paragraph
REASONS = {
    "pronoun": "a pronoun tag",
    "turn": "turn-taking",
    "beat": "an action beat",
    "context": "the context",
    "several": "a description that may be several people",
    "shared": "a name several people share",
}
_BARE = re.compile(r"[Tt]he\s+([A-Za-z]{3,})")  # `the drummer`, `the Musketeer`


def reason(how: str) -> str | None:
    """Why a quotation attributed by `how` is worth checking; None for a naming tag."""
    kind, _, subject = how.partition(":")
    if kind in ("after", "before"):
        # a name, a description, or the narrator's own `I said`: a naming tag
        return REASONS["pronoun"] if pronoun_subject(subject) else None
    if kind == "shared":  # a short name placed by its scene (attribution_shared)
        return REASONS["shared"]
    if kind in ("self-named", "cleft"):
        return None
    if kind in ("turn", "exchange", "between"):
        return REASONS["turn"]
    if kind in ("beat", "after-beat", "beat-paragraph", "actor"):
        return REASONS["beat"]
    return REASONS["context"]


def quote_reasons(hows: list[str], speakers: list[str | None],
                  several: set[int] | frozenset[int] = frozenset()) -> list[str | None]:
    """Per quotation of a paragraph, why to check its speaker (None: a naming tag, or no
    speaker); a quotation that follows the one before it (`same`) shares its reason.
    `several`: the quotations whose tag names a description that may be several people."""
    out: list[str | None] = []
    for i, (how, who) in enumerate(zip(hows, speakers, strict=True)):
        if not who:
            out.append(None)
        elif how.partition(":")[0] in _FOLLOWS and i and speakers[i - 1] == who:
            out.append(out[i - 1])
        else:
            out.append(reason(how) or (REASONS["several"] if i in several else None))
    return out


def _plural(low: str) -> str:
    return (low[:-3] + "men" if low.endswith("man") else
            low[:-1] + "ies" if low.endswith("y") and low[-2:-1] not in "aeiou" else
            low + "es" if low.endswith(("s", "x", "ch", "sh")) else low + "s")


def several_described(texts: list[str], subjects: list[str]) -> frozenset[str]:
    """Of the bare descriptions that tag lines (`said the drummer`), the nouns the text
    shows may stand for more than one person: a plural (`the drummers`, `men`), `another
    drummer` / `the other drummer`, or two kinds (`the Dutch drummer`, `the American
    drummer`). A line tagged so names a role, not yet a person. The text is read twice,
    once per question, for all the nouns together (a novel tags with dozens)."""
    nouns = {m.group(1) for s in subjects if (m := _BARE.fullmatch(s))}
    if not nouns:
        return frozenset()
    text = "\n".join(texts)
    by_plural: dict[str, set[str]] = {}
    by_low: dict[str, set[str]] = {}
    for noun in nouns:
        by_plural.setdefault(_plural(noun.casefold()), set()).add(noun)
        by_low.setdefault(noun.casefold(), set()).add(noun)
    out: set[str] = set()
    for m in re.finditer(rf"\b(?:(?P<p>{one_of(by_plural)})|(?:(?:an|the)\s*other|second)\s+"
                         rf"(?P<s>{one_of(by_low)}))\b", text, re.IGNORECASE):
        out |= by_plural[m["p"].casefold()] if m["p"] else by_low[m["s"].casefold()]
    kinds: dict[str, set[str]] = {}
    rest = nouns - out
    if rest:
        for m in re.finditer(rf"\b[Tt]he\s+([A-Za-z]+)\s+({one_of(rest)})\b", text):
            kinds.setdefault(m.group(2), set()).add(m.group(1).casefold())
    return frozenset(out | {n for n, k in kinds.items() if len(k) >= 2})


def described_several(subject: str, several: frozenset[str]) -> bool:
    """The tag's subject is a bare description the text shows may be several people."""
    return bool(several) and bool(m := _BARE.fullmatch(subject)) and m.group(1) in several


def shared_names(speakers: set[str]) -> frozenset[str]:
    """The one-word speakers whose name is also a word of another speaker's name (`George`
    beside `George Harris` and `Mas'r George`; `Sedley` beside `Mr. Sedley`): the import kept
    them apart because the short name fits several people, so a line given to it may be
    any of them (`attribution_shared` gives it to the one its chapter names, where it can)."""
    words: dict[str, set[str]] = {}
    for name in speakers:
        if len(parts := name.split()) > 1:
            for w in parts:
                words.setdefault(w.casefold(), set()).add(name)
    return frozenset(n for n in speakers if " " not in n and words.get(n.casefold()))
