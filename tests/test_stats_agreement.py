"""Position bias and inter-rater agreement (spec 002's gates), with labels and the caveat."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

from blindtest.stats import (
    AGREEMENT_CAVEAT,
    cohen_kappa,
    fleiss_kappa,
    kappa_label,
    percent_agreement,
    position_bias,
)


def test_position_bias_is_flagged_when_significant() -> None:
    result = position_bias(30, 40)
    assert result.p_value == pytest.approx(0.0022214337732293643, rel=1e-12)  # 2 P(X >= 30)
    assert result.significant
    assert result.flagged
    assert result.deviation == 0.25


def test_position_bias_is_flagged_beyond_the_margin_even_when_not_significant() -> None:
    result = position_bias(6, 10)
    assert not result.significant
    assert result.exceeds_margin
    assert result.flagged
    relaxed = position_bias(6, 10, margin=0.1)
    assert not relaxed.exceeds_margin
    assert not relaxed.flagged


def test_balanced_choices_are_not_flagged() -> None:
    result = position_bias(50, 100)
    assert result.p_value == 1.0
    assert not result.flagged
    assert result.share.lo < 0.5 < result.share.hi


def test_spec_002_caveat_rides_on_every_agreement_result() -> None:
    assert "bias the judges share" in AGREEMENT_CAVEAT
    assert percent_agreement([["left", "left"]]).caveat == AGREEMENT_CAVEAT
    assert cohen_kappa(["a", "b"], ["a", "a"]).caveat == AGREEMENT_CAVEAT
    assert fleiss_kappa([["a", "b", "a"], ["b", "b", "b"]]).caveat == AGREEMENT_CAVEAT


def test_percent_agreement_uses_spec_001_anchors() -> None:
    # Spec 001: "agree on eighty percent of pairs are producing a signal; two who agree on
    # fifty-five percent are producing noise".
    eighty = [["l", "l"]] * 8 + [["l", "r"]] * 2
    fifty_five = [["l", "l"]] * 11 + [["l", "r"]] * 9
    assert percent_agreement(eighty).statistic == pytest.approx(0.8, rel=1e-15)
    assert percent_agreement(eighty).label == "signal"
    assert percent_agreement(fifty_five).label == "noise"
    assert percent_agreement([["l", "l"]] * 7 + [["l", "r"]] * 3).label == "weak"


def test_cohen_kappa_against_the_definition() -> None:
    first = ["left", "left", "right", "tie", "right", "left", "tie", "right"]
    second = ["left", "right", "right", "tie", "right", "left", "left", "right"]
    # By hand: p_o = 6/8; marginals first (l 3, r 3, t 2), second (l 3, r 4, t 1);
    # p_e = (3*3 + 3*4 + 2*1) / 64 = 23/64; kappa = (48/64 - 23/64) / (41/64) = 25/41.
    result = cohen_kappa(first, second)
    assert result.observed == 0.75
    assert result.expected == pytest.approx(23 / 64, rel=1e-15)
    assert result.statistic == pytest.approx(float(Fraction(25, 41)), rel=1e-14)
    assert result.label == "substantial"  # 0.610


def test_fleiss_kappa_matches_the_textbook_example() -> None:
    # Fleiss (1971) style worked example (10 items, 14 raters, 5 categories), as tabulated in
    # many references: P-bar = 0.378, P-bar_e = 0.213, kappa = 0.210.
    counts = [
        (0, 0, 0, 0, 14),
        (0, 2, 6, 4, 2),
        (0, 0, 3, 5, 6),
        (0, 3, 9, 2, 0),
        (2, 2, 8, 1, 1),
        (7, 7, 0, 0, 0),
        (3, 2, 6, 3, 0),
        (2, 5, 3, 2, 2),
        (6, 5, 2, 1, 0),
        (0, 2, 2, 3, 7),
    ]
    ratings = [[c for c, m in enumerate(row) for _ in range(m)] for row in counts]
    result = fleiss_kappa(ratings)
    # Exact value from the definition, in fractions.
    p_bar = sum(Fraction(sum(m * (m - 1) for m in row), 14 * 13) for row in counts) / 10
    shares = [Fraction(sum(row[c] for row in counts), 140) for c in range(5)]
    p_e = sum(s * s for s in shares)
    assert result.statistic == pytest.approx(float((p_bar - p_e) / (1 - p_e)), rel=1e-13)
    assert (f"{result.observed:.3f}", f"{result.expected:.3f}") == ("0.378", "0.213")
    assert f"{result.statistic:.3f}" == "0.210"
    assert result.label == "fair"
    assert result.n_raters == 14
    assert result.n_items == 10


def test_perfect_and_undefined_agreement() -> None:
    assert cohen_kappa(["a", "b", "a"], ["a", "b", "a"]).statistic == 1.0
    assert cohen_kappa(["a", "b", "a"], ["a", "b", "a"]).label == "almost perfect"
    # Convention: every rating the same label -> chance agreement is 1, kappa undefined.
    same = cohen_kappa(["a", "a"], ["a", "a"])
    assert math.isnan(same.statistic)
    assert same.label == "undefined"
    assert json.loads(json.dumps(same.to_dict(), allow_nan=False))["statistic"] is None


@pytest.mark.parametrize(
    ("kappa", "label"),
    [
        (-0.1, "poor"),
        (0.0, "slight"),
        (0.2, "slight"),
        (0.21, "fair"),
        (0.4, "fair"),
        (0.5, "moderate"),
        (0.7, "substantial"),
        (0.8, "substantial"),
        (0.81, "almost perfect"),
    ],
)
def test_landis_koch_bands(kappa: float, label: str) -> None:
    assert kappa_label(kappa) == label


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: position_bias(11, 10), r"left must be in \[0, n\] = \[0, 10\], got 11"),
        (lambda: position_bias(1, 10, margin=0.7), r"margin must be in \[0, 0.5\], got 0.7"),
        (
            lambda: cohen_kappa(["a"], ["a", "b"]),
            r"both raters must label the same items, got 1 and 2",
        ),
        (lambda: cohen_kappa([], []), r"ratings must hold at least one item, got 0"),
        (lambda: percent_agreement([["a"]]), r"ratings\[0\] must hold at least 2 ratings, got 1"),
        (
            lambda: fleiss_kappa([["a", "b"], ["a", "b", "c"]]),
            r"same number of ratings, got sizes \[2, 3\]",
        ),
    ],
)
def test_bad_arguments_are_refused(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
