"""Lexical search helpers: tokenising, BM25 ranking (rank-bm25), mention finding."""

from __future__ import annotations

import re
from collections.abc import Sequence

from rank_bm25 import BM25Okapi

_WORD = re.compile(r"[\w']+")
STOPWORDS = frozenset(
    "a an the of and or to in on at for with by from as is are was were be been it its this "
    "that these those his her their our your my s about into over under".split()
)


def tokens(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.casefold()) if w not in STOPWORDS]


def bm25_rank(query: str, docs: Sequence[str], top: int | None = None) -> list[tuple[int, float]]:
    """(doc position, score) best first; docs sharing no token with the query are left out."""
    q = tokens(query)
    if not q or not docs:
        return []
    corpus = [tokens(d) or ["∅"] for d in docs]
    scores = BM25Okapi(corpus).get_scores(q)
    qset = set(q)
    ranked = [(n, float(s)) for n, s in enumerate(scores) if qset & set(corpus[n])]
    ranked.sort(key=lambda x: (-x[1], -x[0]))
    return ranked[:top] if top else ranked


def overlap(a: str, b: str) -> float:
    """Share of the smaller title's content words found in the other (0..1)."""
    ta, tb = set(tokens(a)), set(tokens(b))
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / min(len(ta), len(tb))


def mention_pattern(keys: Sequence[str]) -> re.Pattern[str] | None:
    """Whole-word, case-insensitive pattern for any of the keys (longest first)."""
    keys = sorted({k.strip() for k in keys if k and k.strip()}, key=len, reverse=True)
    if not keys:
        return None
    alts = "|".join(re.escape(k) for k in keys)
    return re.compile(rf"(?<![\w])(?:{alts})(?![\w])", re.IGNORECASE)
