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
