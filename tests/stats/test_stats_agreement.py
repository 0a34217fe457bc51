"""Position bias and inter-rater agreement (spec 002's gates), with labels and the caveat."""

from __future__ import annotations

import json
import math
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from blindtest.model.rng import IndexStream
from blindtest.stats import (
    AGREEMENT_CAVEAT,
    cohen_kappa,
    fleiss_kappa,
    kappa_label,
    kappa_with_se,
    krippendorff_alpha,
    percent_agreement,
    position_bias,
)
from blindtest.stats.agreement import _alpha_from_weights


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


# --------------------------------------------------------------- Krippendorff's alpha, FCE kappa

REFERENCE = json.loads(
    (Path(__file__).parents[1] / "data" / "agreement_reference.json").read_text(encoding="utf-8")
)
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", section C: 4 coders x 12
# units with missing values (None).
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def _units(rows: list[list[int | None]]) -> list[list[int]]:
    return [[v for r in rows if (v := r[i]) is not None] for i in range(len(rows[0]))]


def _exact_alpha(units: list[list[int]]) -> Fraction:
    # Coincidence-matrix route (Krippendorff 2011, eqs. for nominal data) in exact fractions.
    pairable = [u for u in units if len(u) >= 2]
    n = sum(len(u) for u in pairable)
    o_cc = sum(Fraction(sum(u.count(c) * (u.count(c) - 1) for c in set(u)), len(u) - 1)
               for u in pairable)  # fmt: skip
    totals = Counter(v for u in pairable for v in u)
    d_o = 1 - o_cc / n
    d_e = 1 - Fraction(sum(t * (t - 1) for t in totals.values()), n * (n - 1))
    return Fraction(1 - d_o / d_e)


def test_alpha_matches_krippendorffs_published_example_exactly() -> None:
    result = krippendorff_alpha(_units(K2011))
    exact = _exact_alpha(_units(K2011))
    assert exact == Fraction(113, 152)  # 0.7434...; published as 0.743
    assert round(result.statistic, 3) == 0.743
    assert result.statistic == pytest.approx(float(exact), rel=1e-14)
    assert result.statistic == pytest.approx(REFERENCE["alpha"]["krippendorff_2011"], rel=1e-12)
    # Unit 12 has one value: not pairable, it drops out; 40 pairable values remain.
    assert (result.n_units, result.n_values) == (11, 40)


def test_alpha_of_a_dealt_panel_matches_the_krippendorff_package() -> None:
    dealt = [
        [0, 1, 0, None, 0, 1, None, 2, 0, 1, None, 0],
        [0, None, 1, 1, 0, None, 2, 2, None, 1, 0, 1],
        [None, 1, 0, 1, None, 0, 2, None, 1, None, 0, 0],
    ]
    result = krippendorff_alpha(_units(dealt))
    assert result.statistic == pytest.approx(REFERENCE["alpha"]["dealt_panel"], rel=1e-12)
    assert result.statistic == pytest.approx(float(_exact_alpha(_units(dealt))), rel=1e-14)


def test_alpha_interval_is_recomputed_exactly_from_the_seed() -> None:
    units = _units(K2011)
    first = krippendorff_alpha(units, rng=IndexStream("design-seed", "agreement"))
    again = krippendorff_alpha(units, rng=IndexStream("design-seed", "agreement"))
    other = krippendorff_alpha(units, rng=IndexStream("another-seed", "agreement"))
    assert first.interval == again.interval
    assert first.interval != other.interval
    assert first.interval is not None
    assert first.interval.lo < first.statistic < first.interval.hi
    assert first.resamples == 2000
    assert krippendorff_alpha(units).interval is None  # no seed, no interval


def test_alpha_is_undefined_when_everyone_uses_one_category() -> None:
    result = krippendorff_alpha([["A", "A"], ["A", "A", "A"]], rng=IndexStream("s", "agreement"))
    assert math.isnan(result.statistic)
    assert result.interval is None
    assert result.label == "undefined"
    empty = krippendorff_alpha([["A"], ["B"]], rng=IndexStream("s", "agreement"))
    assert empty.n_units == 0
    assert math.isnan(empty.statistic)


def test_alpha_bootstrap_interval_covers_the_panels_alpha() -> None:
    # Each trial has a true answer drawn from pi; each judge copies it with probability r, else
    # draws afresh from pi. Then P(agree) = r^2 + (1 - r^2) sum(pi^2) and chance agreement is
    # sum(pi^2), so the panel's alpha is r^2. 3 judges dealt 2 per trial over 60 trials.
    rng = np.random.default_rng(20261202)
    sims, trials, resamples, r = 400, 60, 500, math.sqrt(0.5)
    pi = np.array([0.45, 0.45, 0.10])
    truth = rng.choice(3, size=(sims, trials), p=pi)
    fresh = rng.choice(3, size=(sims, trials, 2), p=pi)
    copy = rng.random((sims, trials, 2)) < r
    votes = np.where(copy, truth[..., None], fresh)  # (sims, trials, 2)
    counts = np.stack([(votes == c).sum(axis=2) for c in range(3)], axis=2).astype(float)
    sizes = np.full(trials, 2.0)
    covered = 0
    for s in range(sims):
        picks = rng.integers(0, trials, size=(resamples, trials))
        weights = np.zeros((resamples, trials))
        np.add.at(weights, (np.repeat(np.arange(resamples), trials), picks.ravel()), 1.0)
        draws = _alpha_from_weights(weights, counts[s], sizes)[0]
        lo, hi = np.nanquantile(draws, [0.025, 0.975])
        covered += lo <= 0.5 <= hi
    # Found 0.9425 with these seeds (400 panels, standard error about 0.011): close to the
    # nominal 95%.
    assert 0.90 <= covered / sims <= 0.98


@pytest.mark.parametrize(
    ("case", "first", "second"),
    [
        ("wikipedia", [0] * 25 + [1] * 25, [0] * 20 + [1] * 5 + [0] * 10 + [1] * 15),
        ("one_sided", [0] * 36 + [1, 1, 0, 0], [0] * 36 + [0, 0, 1, 1]),
        (
            "three_categories",
            [0, 0, 0, 1, 1, 2, 2, 0, 1, 2] * 3,
            [0, 0, 1, 1, 1, 2, 0, 0, 2, 2] * 3,
        ),
    ],
)
def test_kappa_standard_error_is_fleiss_cohen_everitt(
    case: str, first: list[int], second: list[int]
) -> None:
    # statsmodels 0.15.0 cohens_kappa; tests/data/agreement_reference.py.
    want = REFERENCE["kappa"][case]
    result = kappa_with_se(first, second)
    assert result.statistic == pytest.approx(want["kappa"], rel=1e-12)
    assert result.se == pytest.approx(want["se"], rel=1e-10)
    assert result.se0 == pytest.approx(want["se0"], rel=1e-10)
    assert result.interval is not None
    assert result.interval.lo == pytest.approx(want["lo"], rel=1e-10)
    assert result.interval.hi == pytest.approx(want["hi"], rel=1e-10)
    assert result.p_value == pytest.approx(want["p_two_sided"], rel=1e-9)


def test_one_sided_labels_get_a_narrow_interval_below_zero() -> None:
    # 95% "left" from both, the rare label never shared: Cohen's simple SE gave (-1.0, 0.926).
    result = kappa_with_se([0] * 36 + [1, 1, 0, 0], [0] * 36 + [0, 0, 1, 1])
    assert result.interval is not None
    assert (round(result.interval.lo, 3), round(result.interval.hi, 3)) == (-0.104, -0.001)


def test_kappa_degenerate_cases_are_said_in_words() -> None:
    everything = kappa_with_se(["a", "b", "a"], ["a", "b", "a"])
    assert everything.statistic == 1.0
    assert everything.interval is None
    assert everything.statement is not None
    assert "agreed on all 3 shared trials" in everything.statement
    one = kappa_with_se(["a"], ["b"])
    assert one.interval is None
    assert one.statement == "one shared trial: too few for an interval or a test"
    same = kappa_with_se(["a", "a"], ["a", "a"])
    assert math.isnan(same.statistic)
    assert same.statement is not None
    assert "kappa is undefined" in same.statement
    with pytest.raises(ValueError, match="confidence_level must be in"):
        kappa_with_se(["a"], ["a"], confidence_level=1.0)


def _fce_variances(first: list[str], second: list[str]) -> tuple[Fraction, Fraction, Fraction]:
    """Kappa and Fleiss-Cohen-Everitt (1969) eq. 13 and 14 numerators in exact arithmetic."""
    n = len(first)
    labels = set(first) | set(second)
    cells = Counter(zip(first, second, strict=True))
    p = {k: Fraction(v, n) for k, v in cells.items()}
    pr = {c: Fraction(first.count(c), n) for c in labels}
    pc = {c: Fraction(second.count(c), n) for c in labels}
    po = sum((p.get((c, c), Fraction(0)) for c in labels), Fraction(0))
    pe = sum((pr[c] * pc[c] for c in labels), Fraction(0))
    kappa = (po - pe) / (1 - pe)
    on = sum(
        (p.get((c, c), Fraction(0)) * (1 - (pr[c] + pc[c]) * (1 - kappa)) ** 2 for c in labels),
        Fraction(0),
    )
    off = (1 - kappa) ** 2 * sum(
        (v * (pc[a] + pr[b]) ** 2 for (a, b), v in p.items() if a != b), Fraction(0)
    )
    var = on + off - (kappa - pe * (1 - kappa)) ** 2
    var0 = pe + pe**2 - sum((pr[c] * pc[c] * (pr[c] + pc[c]) for c in labels), Fraction(0))
    return kappa, var, var0


@pytest.mark.parametrize(
    ("first", "second", "words"),
    [
        (["A", "tie", "B"] * 10, ["A"] * 30, "one of the two gave the same answer on all 30"),
        (["tie"] * 23 + ["A"] * 7, ["tie"] * 30, "one of the two gave the same answer on all 30"),
        (["tie"] * 30, ["A"] * 30, "each judge gave one answer, a different one, on all 30"),
    ],
)
def test_a_judge_with_one_answer_throughout_gets_kappa_zero_in_words_not_a_zero_width_interval(
    first: list[str], second: list[str], words: str
) -> None:
    # In exact arithmetic kappa is 0 and both FCE variances are 0; floating point left about
    # 1e-19 and the screen printed "95% interval -0.00 to 0.00" with no test.
    kappa, var, var0 = _fce_variances(first, second)
    assert (kappa, var, var0) == (Fraction(0), Fraction(0), Fraction(0))
    for a, b in ((first, second), (second, first)):
        found = kappa_with_se(a, b)
        assert found.statistic == 0.0
        assert (found.se, found.se0) == (0.0, 0.0)
        assert found.interval is None
        assert math.isnan(found.p_value)
        assert found.statement is not None
        assert words in found.statement
        assert "no interval or test is given" in found.statement
