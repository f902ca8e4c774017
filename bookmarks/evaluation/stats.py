"""Statistics for pairwise human judgments: win/tie/loss rates with bootstrap confidence
intervals, and agreement between annotators on shared items — Krippendorff's alpha
(nominal) and Gwet's AC1, which stays meaningful when one category (ties) dominates."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence


def rates(outcomes: Sequence[str], categories: Sequence[str] = ("win", "tie", "loss")) -> dict:
    n = len(outcomes)
    counts = Counter(outcomes)
    return {c: counts[c] / n if n else 0.0 for c in categories}


def bootstrap_ci(outcomes: Sequence[str], category: str, *, resamples: int = 2000,
                 level: float = 0.95, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval for the share of `category` among outcomes."""
    if not outcomes:
        return (0.0, 0.0)
    rng = random.Random(seed)
    n = len(outcomes)
    hits = [o == category for o in outcomes]
    shares = sorted(sum(hits[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    lo = shares[int((1 - level) / 2 * (resamples - 1))]
    hi = shares[int((1 + level) / 2 * (resamples - 1))]
    return (lo, hi)


def krippendorff_alpha_nominal(units: dict[object, Sequence[str]]) -> float | None:
    """Alpha for nominal data; `units` maps an item to the labels its raters gave.
    Items with fewer than two labels are ignored. None when undefined."""
    pairable = {u: list(v) for u, v in units.items() if len(v) >= 2}
    if not pairable:
        return None
    coincidence: Counter = Counter()
    for labels in pairable.values():
        m = len(labels)
        for i, a in enumerate(labels):
            for j, b in enumerate(labels):
                if i != j:
                    coincidence[(a, b)] += 1 / (m - 1)
    n_c: Counter = Counter()
    for (a, _), w in coincidence.items():
        n_c[a] += w
    n = sum(n_c.values())
    observed = sum(w for (a, b), w in coincidence.items() if a != b)
    expected = sum(n_c[a] * n_c[b] for a in n_c for b in n_c if a != b) / (n - 1)
    if expected == 0:
        return 1.0 if observed == 0 else None
    return 1 - observed / expected


def gwet_ac1(units: dict[object, Sequence[str]], categories: Sequence[str] | None = None) -> float | None:
    """Gwet's AC1 for any number of raters per item (items with < 2 ratings ignored)."""
    pairable = {u: list(v) for u, v in units.items() if len(v) >= 2}
    if not pairable:
        return None
    cats = list(categories or sorted({c for v in pairable.values() for c in v}))
    q = len(cats)
    if q < 2:
        return 1.0
    pa_terms, pi = [], Counter()
    for labels in pairable.values():
        r = len(labels)
        counts = Counter(labels)
        pa_terms.append(sum(c * (c - 1) for c in counts.values()) / (r * (r - 1)))
        for k in cats:
            pi[k] += counts[k] / r
    n = len(pairable)
    pa = sum(pa_terms) / n
    pe = sum((pi[k] / n) * (1 - pi[k] / n) for k in cats) / (q - 1)
    if pe == 1:
        return None
    return (pa - pe) / (1 - pe)


# -- paired comparisons of two runs over the same items --------------------------------------
def paired_difference(a: Sequence[float], b: Sequence[float], *, resamples: int = 5000,
                      level: float = 0.95, seed: int = 0) -> dict:
    """Mean of the per-item differences a − b, its percentile bootstrap interval (items
    resampled), and the two-sided p-value of a paired sign-flip permutation test (exact
    up to 16 items with a nonzero difference, else `resamples` random flips)."""
    if len(a) != len(b):
        raise ValueError("paired samples must have the same items")
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    n = len(diffs)
    if n == 0:
        return {"n": 0, "diff": 0.0, "ci": (0.0, 0.0), "p": 1.0}
    observed = sum(diffs) / n
    rng = random.Random(seed)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    ci = (means[int((1 - level) / 2 * (resamples - 1))],
          means[int((1 + level) / 2 * (resamples - 1))])
    nonzero = [abs(d) for d in diffs if d]
    target = abs(sum(diffs)) - 1e-9
    if not nonzero:
        p = 1.0
    elif len(nonzero) <= 16:
        total = 1 << len(nonzero)
        extreme = sum(1 for mask in range(total)
                      if abs(sum(d if mask >> k & 1 else -d for k, d in enumerate(nonzero)))
                      >= target)
        p = extreme / total
    else:
        extreme = sum(1 for _ in range(resamples)
                      if abs(sum(d if rng.random() < 0.5 else -d for d in nonzero)) >= target)
        p = (extreme + 1) / (resamples + 1)
    return {"n": n, "diff": observed, "ci": ci, "p": p}


def clustered_bootstrap_ci(items: dict[object, Sequence[str]], category: str, *,
                           resamples: int = 2000, level: float = 0.95,
                           seed: int = 0) -> tuple[float, float]:
    """Bootstrap interval for the share of `category` when votes cluster by item (several
    annotators, or a judge's two orders, on one item): items are resampled, not votes."""
    groups = [list(v) for v in items.values() if v]
    if not groups:
        return (0.0, 0.0)
    rng = random.Random(seed)
    shares = []
    for _ in range(resamples):
        picked = [groups[rng.randrange(len(groups))] for _ in groups]
        votes = sum(len(g) for g in picked)
        shares.append(sum(o == category for g in picked for o in g) / votes)
    shares.sort()
    return (shares[int((1 - level) / 2 * (resamples - 1))],
            shares[int((1 + level) / 2 * (resamples - 1))])
