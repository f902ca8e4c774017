"""Quotations in prose paragraphs: where they are, which are speech, and how to join them.

A text quotes speech in double marks (straight or curly) or, in some British editions, in
single marks; `quote_style` tells which from the whole text. Inside a paragraph a quotation
runs from an opening mark to its closing mark, or to the paragraph's end when a speech goes
on into the next paragraph. An apostrophe between letters (`don't`) is not a mark.

A quotation that sits inside a sentence of narration (`the word "liberality," made him
frown`, `a jar labelled 'ORANGE MARMALADE'`) is a scare quote, a title or a label, not
speech: it is marked `speech=False` and stays narration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DOUBLE, SINGLE = "double", "single"
_OPENERS_BEFORE = " \t([{—–-_"
_TERMINAL = ".!?—–-…"
_WORD = re.compile(r"[A-Za-z’'\-]+")


@dataclass
class Quote:
    start: int  # the opening mark (or the paragraph start when there is none)
    end: int  # just after the closing mark (or the paragraph end when there is none)
    text: str  # between the marks
    closed: bool = True
    speech: bool = True


def quote_style(text: str) -> str:
    """`double` unless the text quotes mostly in single marks (`'Well!' thought Alice`)."""
    double = len(re.findall(r"[“”]", text)) + text.count('"')
    single = len(re.findall(r"(?:^|(?<=[\s(—-]))['‘](?=[A-Za-z])", text, re.M))
    return SINGLE if single > 3 * double and single >= 4 else DOUBLE


def _opening(p: str, i: int) -> bool:
    before = p[i - 1] if i else " "
    after = p[i + 1] if i + 1 < len(p) else " "
    return (before in _OPENERS_BEFORE or before in "“\"‘'") and not after.isspace()


def _closing(p: str, i: int) -> bool:
    before = p[i - 1] if i else " "
    after = p[i + 1] if i + 1 < len(p) else " "
    return not before.isspace() and not after.isalnum()


def find_quotes(p: str, style: str = DOUBLE, open_before: bool = False) -> list[Quote]:
    """The quotations of paragraph `p`. `open_before`: the previous paragraph ended inside a
    quotation, so a closing mark before any opening one ends a quotation begun there."""
    if style == SINGLE:
        return _single(p, open_before)
    return _double(p, open_before)


def _double(p: str, open_before: bool) -> list[Quote]:
    quotes: list[Quote] = []
    start: int | None = None
    depth = 0
    last_end = 0
    for i, ch in enumerate(p):
        if start is None:
            if ch == "“" or (ch == '"' and _opening(p, i)):
                start, depth = i, 0
            elif ch in "”\"" and (s := _stray_start(p, last_end, i, open_before and not quotes)) \
                    is not None:
                quotes.append(Quote(s, i + 1, p[s:i].lstrip("‘’'")))
                last_end = i + 1
        elif ch == "“" and _opening(p, i) and p[start] == "“":
            depth += 1  # a nested double quotation inside a speech
        elif ch == "”" or ch == '"':
            if depth and ch == "”":
                depth -= 1
                continue
            quotes.append(Quote(start, i + 1, p[start + 1:i]))
            start, last_end = None, i + 1
    if start is not None:
        quotes.append(Quote(start, len(p), p[start + 1:], closed=False))
    return quotes


def _stray_start(p: str, last_end: int, at: int, continued: bool) -> int | None:
    """Where a quotation closed without an opening double mark began: a single mark typed
    instead (`’You can move…”`), or the paragraph start when the speech began in the
    paragraph before (`continued`); None for a stray mark."""
    for i in range(at - 1, last_end - 1, -1):
        if p[i] in "‘’'" and _opening(p, i) and (i == 0 or p[i - 1].isspace()):
            return i
    return 0 if continued else None


def _single(p: str, open_before: bool) -> list[Quote]:
    quotes: list[Quote] = []
    start: int | None = None
    for i, ch in enumerate(p):
        if ch not in "'‘’":
            continue
        if start is None:
            if ch in "'‘" and _opening(p, i):
                start = i
            elif not quotes and open_before and ch in "'’" and _closing(p, i):
                quotes.append(Quote(0, i + 1, p[:i]))
        elif ch in "'’" and _closing(p, i) and i > start + 1:
            quotes.append(Quote(start, i + 1, p[start + 1:i]))
            start = None
    if start is not None:
        quotes.append(Quote(start, len(p), p[start + 1:], closed=False))
    return quotes


# --- scare quotes, titles, labels ------------------------------------------------------------

# words after which a quotation inside a sentence is still speech (`then said "The fourth."`)
LEAD_WORDS = frozenset("""
said say says saying cried cry cries crying asked ask asks asking replied reply replies
answered answer answers returned shouted shouting screamed screaming whispered whispering
muttered murmured called calling exclaimed began begun begin went added thought repeated
sang singing roared bawled yelled remarked observed continued resumed growled sighed
pleaded interrupted retorted gasped hissed shrieked muttering murmuring out aloud
""".split())


_TITLE_CASE = re.compile(r"(?:[A-Z][\w’'-]*)(?:\s+(?:[A-Z][\w’'-]*|of|the|and|a|in|on|to)){0,4}")


def mark_scare_quotes(p: str, quotes: list[Quote], speakerish: set[int] | None = None) -> None:
    """Set `speech=False` on quotations that are words quoted inside a sentence or titles.
    `speakerish`: indices of quotations a speech tag right before them claims."""
    speakerish = speakerish or set()
    for k, q in enumerate(quotes):
        inner = q.text.strip(" _")
        letters = [c for c in inner if c.isalpha()]
        terminal = inner[-1:] in _TERMINAL or inner.endswith("--")
        if letters and all(c.isupper() for c in letters) and len(inner.split()) <= 6 \
                and (not terminal or inner.endswith("-")) and len(letters) > 1:
            q.speech = False  # 'DRINK ME', 'ORANGE MARMALADE'
            continue
        if k and not quotes[k - 1].speech and p[quotes[k - 1].end:q.start].strip(" ,") in ("and", "or", "") \
                and _TITLE_CASE.fullmatch(inner.rstrip(".,!?")):
            q.speech = False  # `playing "Carmen" and "Madame Butterfly."`: a second title
            continue
        if re.search(r"\b(?:at|of|in|from|to|for|with|by|on|into)\s*$", p[:q.start]) \
                and _TITLE_CASE.fullmatch(inner.rstrip(".,!?")) and len(inner.split()) > 1 \
                and k not in speakerish:
            q.speech = False  # `tankards of ale at "The Fisherman's Rest."`: a name (`with
            # "Humbug."`, `a call of "Cooky!"` speak)
            continue
        if k not in speakerish and re.search(r"\b(?:a|an|the|his|her|their|its|my|our|your|this|that)\s*$",
                                             p[:q.start], re.I):
            q.speech = False  # `a swirl of water and a 'cloop!'`: a word used as a noun
            continue
        if k in speakerish or terminal or not q.closed:
            continue
        before = p[:q.start].rstrip(" _")
        if not before or before[-1:] in ".!?:;,—–-()[]“”\"'‘’":
            continue
        words = _WORD.findall(before[-40:])
        prev = words[-1].casefold() if words else ""
        if prev and prev not in LEAD_WORDS:
            q.speech = False  # `the ominous word "liberality," Scrooge frowned`
        elif prev in ("say", "ask") and len(words) > 1 and words[-2].casefold() == "to":
            q.speech = False  # `It was all very well to say 'Drink me,'`


# --- joining the quotations one speaker says --------------------------------------------------


def join_quotes(parts: list[str]) -> str:
    """One speech from its quoted pieces, sentence breaks kept: `"I think," he said, "that it
    is so."` → `I think, that it is so.`; `"Nope." … "I'm going."` → `Nope. I'm going.`"""
    out = ""
    for part in (" ".join(p.split()) for p in parts):
        part = part.strip()
        if not part:
            continue
        if not out:
            out = part
        elif part[:1].islower() or part[:1] in "—–-" or out.endswith(("—", "–", "-")):
            out = f"{out} {part}"
        else:
            if out.endswith(","):
                out = out[:-1] + "."
            elif out[-1:].isalnum() or out[-1:] in "_’'":
                out += "."
            out = f"{out} {part}"
    return f"{out[:-1]}." if out.endswith(",") else out
