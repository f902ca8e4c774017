"""Speaker names as printed, in one canonical display form (shared by every story reader)."""

from __future__ import annotations

import re

from bookmarks.stories.story import PSEUDO_CHARACTERS


def normalize_name(raw: str) -> str:
    """Canonical display form of a speaker label: trimmed, no trailing punctuation,
    single spaces, and Title Case when written in capitals (``HAMLET.`` → ``Hamlet``)."""
    name = re.sub(r"\s+", " ", raw).strip().rstrip(".:;,!?").strip()
    if name.casefold() in PSEUDO_CHARACTERS:
        return name.casefold()
    if name.isupper():
        name = " ".join(w.capitalize() if w.isalpha() else w.title() for w in name.split())
    return name


def one_of(words) -> str:
    """A regex alternation matching any of `words` (case as written), the longest first —
    what `"|".join(sorted(words, key=len, reverse=True))` matches, as a prefix tree: Python's
    `re` tries a flat alternation's words one by one at every position of the text, which
    with the hundreds of names of a long novel was most of an import's time. Two words on
    one branch never differ in a character, so the greedy tree finds the same match, the
    longest that lets the rest of the pattern match."""
    tree: dict = {}
    for word in words:
        node = tree
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}
    return _branch(tree)


def _branch(node: dict) -> str:
    kids = [re.escape(ch) + _branch(sub) for ch, sub in sorted(node.items()) if ch]
    if not kids:
        return ""
    body = kids[0] if len(kids) == 1 else "(?:" + "|".join(kids) + ")"
    return f"(?:{body})?" if "" in node else body
