"""Paired comparisons: bootstrap interval over items, sign-flip permutation p-value, and
arena intervals that resample items rather than votes."""

from __future__ import annotations

import pytest

from bookmarks.evaluation.stats import bootstrap_ci, clustered_bootstrap_ci, paired_difference


def test_identical_runs_differ_by_nothing():
    r = paired_difference([100, 0, 100, 0], [100, 0, 100, 0])
    assert r["diff"] == 0 and r["p"] == 1.0 and r["ci"] == (0.0, 0.0)


def test_exact_permutation_p_value():
    # 6 items all better by 1: only the all-plus and all-minus flips are as extreme: 2/64
    r = paired_difference([1] * 6, [0] * 6)
    assert r["diff"] == 1 and r["p"] == pytest.approx(2 / 64)
    assert r["ci"] == (1.0, 1.0)


def test_a_clear_difference_is_significant_and_a_noisy_one_is_not():
    better = paired_difference([60 + (i % 3) for i in range(40)], [40 + (i % 5) for i in range(40)])
    assert better["p"] < 0.01 and better["ci"][0] > 0
    noisy = paired_difference([100, 0, 100, 0, 0, 100], [0, 100, 0, 100, 100, 0])
    assert noisy["p"] > 0.5 and noisy["ci"][0] < 0 < noisy["ci"][1]


def test_items_not_votes_are_resampled():
    # 2 items, 10 votes each, all "win" on one item and "loss" on the other: resampling
    # votes pretends 20 independent votes (narrow); resampling items says we know little
    items = {1: ["win"] * 10, 2: ["loss"] * 10}
    votes = [v for vs in items.values() for v in vs]
    by_vote = bootstrap_ci(votes, "win")
    by_item = clustered_bootstrap_ci(items, "win")
    assert by_item[1] - by_item[0] > by_vote[1] - by_vote[0]
    assert by_item == (0.0, 1.0)
