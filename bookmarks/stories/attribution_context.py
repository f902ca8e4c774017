"""What a reader takes from the narration around a speech, for the stricter speaker rules
(`attribution_rules.py`): the chain of main-clause subjects a pronoun continues, the people
a tag names as listeners (`she said to Lucy`, `he told Mr. Utterson`), and what `the
former` / `the latter` stand for."""

from __future__ import annotations

import re
from functools import lru_cache

from bookmarks.stories.names import one_of
from bookmarks.stories.tags import _SENTENCE_END, PERSON_NOUNS, PRONOUN, clause_subject, mask_abbreviations

_SUBJECT_GENDER = {"he": "m", "she": "f", "it": "n"}


def sentences(text: str) -> list[tuple[int, str]]:
    """(start, sentence) of each sentence of a piece of narration; a title's or an initial's
    full stop (`Mr.`, `G. J.`) ends none."""
    starts = [0, *(m.end() for m in _SENTENCE_END.finditer(mask_abbreviations(text)))]
    ends = [*starts[1:], len(text)]
    return [(s, text[s:e]) for s, e in zip(starts, ends, strict=True) if text[s:e].strip()]


def blank_quotes(p, upto: int | None = None) -> str:
    """The paragraph's text up to `upto` with its quotations blanked (offsets kept); one that
    ends a sentence (`… like?” But Poole was …`) leaves its full stop."""
    text = p.text if upto is None else p.text[:upto]
    for q in p.quotes:
        if q.start < len(text):
            end = min(q.end, len(text))
            stop = q.text.rstrip(" _’'”\"")[-1:] in ".!?" and p.text[q.end:].lstrip()[:1].isupper()
            blank = " " * (end - q.start - 1) + ("." if stop and end == q.end else " ")
            text = text[:q.start] + blank + text[end:]
    return text


_CLAUSE = re.compile(r"[;:]\s+|,\s+(?:and|but)\s+")


@lru_cache(maxsize=8192)
def main_subjects(text: str, spans: bool = False) -> tuple:
    """(where, subject as written) of each main clause's subject, the last clause of the last
    sentence first (`Then he held up his forepaw as the Mole stepped down.` → `he`, not the
    Mole; `Utterson said never a word; and the young man resumed.` → the young man first).
    Asides in brackets are skipped. `spans`: (where, subject or "", clause start, clause end)
    for every clause, with or without a subject found.

    Kept for the last texts asked (a tuple, shared): the rules ask of the same paragraph
    about five times (63,693 calls for 11,597 texts on a novel of 14,851 actions)."""
    text = re.sub(r"\([^()]*\)", lambda m: " " * len(m.group(0)), text)
    out = []
    for start, sentence in reversed(sentences(text)):
        cuts = [0, *(m.end() for m in _CLAUSE.finditer(sentence))]
        ends = [*(m.start() for m in _CLAUSE.finditer(sentence)), len(sentence)]
        for cut, end in reversed(list(zip(cuts, ends, strict=True))):
            found = clause_subject(sentence[cut:])
            if spans:
                at = start + cut + found[0] if found else start + cut
                out.append((at, found[1] if found else "", start + cut, start + end))
            elif found:
                out.append((start + cut + found[0], found[1]))
    return tuple(out)


def pronoun_gender(subject: str) -> str | None:
    """`he` → m, `she` → f, `it` → n; None for anything else."""
    return _SUBJECT_GENDER.get(subject.casefold()) if re.fullmatch(PRONOUN, subject) else None


# the listener named in a tag: `she said to Lucy`, `he told Mr. Utterson`, `asked the girl`
_TO_LISTENER = re.compile(r"\b(?:to|told|tells|asked|asks|addressing|answered|thanked|"
                          r"begged|bade|assured|reminded|warned|urged|facing|looking|(?:looking|"
                          r"glancing|staring|gazing|smiling|nodding)\s+(?:up\s+)?at)\s+(?:her\s+|his\s+)?$")


def listeners(text: str, mentions, to_only: bool = False) -> set[str]:
    """Characters a tag or a beat names as the one spoken to: the mention right after `to`,
    `told`, `asked` … (`"Eat your dinner," she said to Lucy` — Lucy is not the speaker);
    `to_only`: after `to` alone (`turned to Harriet`; `asked his companion` may be a tag)."""
    pattern = _TO_ONLY if to_only else _TO_LISTENER
    return {name for start, _, name, _ in mentions if pattern.search(text[:start])}


_TO_ONLY = re.compile(r"\bto\s+(?:her\s+|his\s+)?$")


_FORMER_LATTER = re.compile(r"\b(?:the\s+)?(former|latter)\b", re.I)


def former_latter(text: str, mentions) -> list[tuple[int, int, str]]:
    """(start, end, character) for each `the former` / `the latter` of a piece of narration:
    the first / second of the last two different characters named before it (`Mr. Enfield
    and the lawyer …; the former lifted up his cane` → Mr. Enfield)."""
    out = []
    for m in _FORMER_LATTER.finditer(text):
        before: list[str] = []
        for start, _, name, _ in sorted(mentions):
            if start < m.start() and (not before or before[-1] != name):
                before.append(name)
        pair = [n for k, n in enumerate(before) if n not in before[k + 1:]][-2:]
        if len(pair) == 2:
            out.append((m.start(), m.end(), pair[0] if m.group(1).casefold() == "former" else pair[1]))
    return out


_RELATIONS = frozenset("friend companion cousin brother sister son daughter father mother uncle aunt "
                       "nephew niece wife husband grandmother grandfather guest visitor".split())
_NOUN_ALT = "|".join(sorted(PERSON_NOUNS - _RELATIONS, key=len, reverse=True))


def appositives(texts: list[str], names: dict[str, str]) -> dict[str, str]:
    """Descriptions the narration gives a named character in apposition (`Mr. Utterson the
    lawyer`, `Mr. Guest, his head clerk,`, `Parker, the butler`, `Fix, one of the detectives`,
    `Jim, a sailor`): {`Lawyer`: `Mr. Utterson`}; and `the old man` is the one man the
    narration calls old (`old Ben Weatherstaff`).
    `names`: display name → a surface form. A relation (`his friend`) names no one; a
    description given to two people is dropped."""
    surfaces = {s: n for n, s in names.items() if s[:1].isupper()} | {n: n for n in names if n[:1].isupper()}
    if not surfaces:
        return {}  # (only lower-case names, `the doctor`: an empty alternation would match anywhere)
    alternatives = one_of(surfaces)
    pattern = re.compile(rf"(?<![\w’'-])({alternatives})"
                         rf"(?:,?\s+(?:the|his|her)|,\s+(?:an?|(?P<one>one\s+of\s+the)))\s+(?:[a-z-]+\s+){{0,2}}(?P<noun>{_NOUN_ALT})(?P<s>s)?(?![\w-])")
    found: dict[str, set[str]] = {}
    for text in texts:
        for m in pattern.finditer(text):
            if bool(m.group("one")) != bool(m.group("s")):
                continue  # `Fix, one of the detectives`: the plural there, and only there
            found.setdefault(m.group("noun").capitalize(), set()).add(surfaces[m.group(1)])
    old = re.compile(rf"(?<![\w’'-])[Oo]ld\s+({alternatives})(?![\w’'-])")
    for text in texts:  # `old Ben Weatherstaff`: `the old man` is he, when he is the one so called
        for m in old.finditer(text):
            if not re.match(r"(?:Mrs|Miss|Ms|Lady|Madame|Mme|Mother|Aunt|Granny)\b", m.group(1)):
                found.setdefault("Old man", set()).add(surfaces[m.group(1)])
    return {desc: owners.pop() for desc, owners in found.items() if len(owners) == 1}


_READ_OUT = re.compile(r"\b(?:read|reads|wrote|writes|ran|runs|was\s+written|(?:is|was)\s+printed|"
                       r"as\s+follows|(?:contained|contains|containing|bore|bears|bearing)\s+the\s+following)"
                       r"\b[^.!?]*:\s*$|\b(?:ran|runs)\s+thus[^.!?]*[:.]?\s*$", re.I)


_WRITES = re.compile(r"^[\s,;:—–-]*(?:\S+\s+){0,3}?(?:wrote|writes|had\s+written|scribbled|scrawled)\b"
                     r"|^[\s,;:—–-]*so\s+it\s+was\s+(?:\w+\s+)?(?:superscribed|inscribed|endorsed|"
                     r"written|printed|headed|labelled|marked)\b", re.I)
_MARKED_AS = re.compile(r"\b(?:superscribed|inscribed|endorsed|written|printed|headed|labelled|labeled|"
                        r"marked|signed)\b(?:\s+\w+){0,4}?\s+(?:as\s+)?$", re.I)


def mark_written(paras) -> None:
    """Text that is read or written, not spoken, is marked `speech=False`: paragraphs of
    quotation only after narration introducing it (`and read as follows:`, `Its contents
    ran thus:`), until a paragraph with narration of its own; a quotation whose tag is a
    writing verb (`"…," Jekyll wrote, "…"`, `"…," so it was superscribed`); and one the
    narration says is marked or signed so (`marked upon the cover as "not to be opened"`)."""
    written = False
    for p in paras:
        narration = blank_quotes(p).strip(" ,.;:—–-")
        if written and p.quotes and not narration:
            for q in p.quotes:
                q.speech = False
            continue
        for k, q in enumerate(p.quotes):
            after = p.text[q.end:p.quotes[k + 1].start if k + 1 < len(p.quotes) else len(p.text)]
            before = p.text[p.quotes[k - 1].end if k else 0:q.start]
            if _WRITES.match(after) or _MARKED_AS.search(before):
                q.speech = False
                if _WRITES.match(after) and k + 1 < len(p.quotes) and not re.search(r"[.!?]", after):
                    p.quotes[k + 1].speech = False  # `"…," Jekyll wrote, "but I share his view"`
        tail = p.text[p.quotes[-1].end:] if p.quotes else p.text
        written = bool(_READ_OUT.search(tail))
