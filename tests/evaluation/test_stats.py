"""Statistics against small cases computed by hand."""

from __future__ import annotations

import pytest

from bookmarks.evaluation.stats import bootstrap_ci, gwet_ac1, krippendorff_alpha_nominal, rates


def test_rates():
    assert rates(["win", "win", "tie", "loss"]) == {"win": 0.5, "tie": 0.25, "loss": 0.25}
    assert rates([]) == {"win": 0.0, "tie": 0.0, "loss": 0.0}


def test_bootstrap_ci_brackets_the_share():
    outcomes = ["win"] * 30 + ["tie"] * 50 + ["loss"] * 20
    lo, hi = bootstrap_ci(outcomes, "win", resamples=1000)
    assert lo < 0.30 < hi and 0.18 < lo and hi < 0.42
    assert bootstrap_ci(["win"] * 10, "win") == (1.0, 1.0)


def test_alpha_hand_computed():
    # two raters, four items: (a,a) (a,b) (b,b) (b,b)
    # coincidences: o_aa=2, o_ab=o_ba=1, o_bb=4; n_a=3, n_b=5, n=8
    # D_o = 2, D_e = (3*5 + 5*3)/7 = 30/7 -> alpha = 1 - 2/(30/7) = 1 - 14/30 = 0.5333…
    units = {1: ["a", "a"], 2: ["a", "b"], 3: ["b", "b"], 4: ["b", "b"]}
    assert krippendorff_alpha_nominal(units) == pytest.approx(1 - 14 / 30)
    assert krippendorff_alpha_nominal({1: ["a", "a"], 2: ["b", "b"]}) == pytest.approx(1.0)
    assert krippendorff_alpha_nominal({1: ["a"]}) is None


def test_ac1_hand_computed():
    # same data: pa = (1 + 0 + 1 + 1)/4 = 0.75; pi_a = (1 + .5 + 0 + 0)/4 = .375, pi_b = .625
    # pe = (.375*.625 + .625*.375)/(2-1) = .46875 -> AC1 = (.75 - .46875)/(1 - .46875) = .5294…
    units = {1: ["a", "a"], 2: ["a", "b"], 3: ["b", "b"], 4: ["b", "b"]}
    assert gwet_ac1(units) == pytest.approx((0.75 - 0.46875) / (1 - 0.46875))


def test_ac1_stays_high_when_ties_dominate_but_alpha_collapses():
    # 9 items both say tie, 1 item tie vs win: agreement is high, but alpha is ~0
    units = {i: ["tie", "tie"] for i in range(9)}
    units[9] = ["tie", "win"]
    assert gwet_ac1(units) > 0.85
    assert krippendorff_alpha_nominal(units) < 0.1
