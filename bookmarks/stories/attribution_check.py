"""Which attributed lines a writer should check first.

The rules give each quotation a speaker by one of several kinds of evidence (`Para.how`).
They are not equally sure: measured on the gold sets the rules were built on and on the
diagnostic sets (`python benchmarks/attribution_accuracy.py --check`), a tag that names the
speaker (`said Anna`, `the old man answered`, the narrator's `I said`) is right about 95% of
the time, a pronoun tag (`she said`) or turn-taking in an untagged exchange about 89%, the
other kinds less. A line the rules attributed without a naming tag carries the reason in
`Action.check`; the Library lists those lines (*lines to check*) so that a writer can read
them first and correct the wrong ones. A writer's correction clears the mark.
"""

from __future__ import annotations

import re

# a tag's subject is the speaker's name or description, or a pronoun (with the stage of
# the search that resolved it glued on, see `Resolver.resolve`)
_PRONOUN = re.compile(r"(?:[Hh]e|[Ss]he|[Ii]t|[Tt]hey|[Ww]e)"
                      r"(?:anaphor|back|called|carried|chain|child|exchange|led|listener|mention"
                      r"|named|relation|reply|sole|subject|unsure)?")
_FOLLOWS = ("same", "resumed", "inherit")  # the quotation before's speaker, in one paragraph
REASONS = {
    "pronoun": "a pronoun tag",
    "turn": "turn-taking",
    "beat": "an action beat",
    "context": "the context",
}


def reason(how: str) -> str | None:
    """Why a quotation attributed by `how` is worth checking; None for a naming tag."""
    kind, _, subject = how.partition(":")
    if kind in ("after", "before"):
        # a name, a description, or the narrator's own `I said`: a naming tag
        return REASONS["pronoun"] if _PRONOUN.fullmatch(subject) else None
    if kind in ("self-named", "cleft"):
        return None
    if kind in ("turn", "exchange", "between"):
        return REASONS["turn"]
    if kind in ("beat", "after-beat", "beat-paragraph", "actor"):
        return REASONS["beat"]
    return REASONS["context"]


def quote_reasons(hows: list[str], speakers: list[str | None]) -> list[str | None]:
    """Per quotation of a paragraph, why to check its speaker (None: a naming tag, or no
    speaker); a quotation that follows the one before it (`same`) shares its reason."""
    out: list[str | None] = []
    for i, (how, who) in enumerate(zip(hows, speakers, strict=True)):
        if not who:
            out.append(None)
        elif how.partition(":")[0] in _FOLLOWS and i and speakers[i - 1] == who:
            out.append(out[i - 1])
        else:
            out.append(reason(how))
    return out
