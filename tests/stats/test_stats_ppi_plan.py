"""Sizing the people's sample: the model's moments by exact fractions, the predicted precision
against a simulation of the same model through the library's estimator, and the search."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from blindtest.stats import ppi_core as core
from blindtest.stats.ppi_plan import people_sample_row, plan_people_sample

SCORES = (Fraction(1), Fraction(1, 2), Fraction(0))


def _model(
    agreement: Fraction, score: Fraction, tie_p: Fraction, tie_j: Fraction
) -> list[list[Fraction]]:
    """The joint table of the module doc, in exact fractions."""
    p = [score - tie_p / 2, tie_p, 1 - score - tie_p / 2]
    untied = p[0] + p[2]
    m = [(1 - tie_j) * p[0] / untied, tie_j, (1 - tie_j) * p[2] / untied]
    shared = [min(a, b) for a, b in zip(p, m, strict=True)]
    rest_p = [a - s for a, s in zip(p, shared, strict=True)]
    rest_m = [b - s for b, s in zip(m, shared, strict=True)]
    left = sum(rest_p)
    chance = sum(a * b for a, b in zip(p, m, strict=True))
    kappa = (agreement - chance) / (sum(shared) - chance)
    return [
        [
            kappa * ((y == j) * shared[y] + (rest_p[y] * rest_m[j] / left if left else 0))
            + (1 - kappa) * p[y] * m[j]
            for j in range(3)
        ]
        for y in range(3)
    ]


def _moments(table: list[list[Fraction]]) -> tuple[Fraction, Fraction, Fraction]:
    zero = Fraction(0)
    py = [sum(row, zero) for row in table]
    pj = [sum((table[y][j] for y in range(3)), zero) for j in range(3)]
    ey = sum((p * s for p, s in zip(py, SCORES, strict=True)), zero)
    ej = sum((p * s for p, s in zip(pj, SCORES, strict=True)), zero)
    var_y = sum((p * s * s for p, s in zip(py, SCORES, strict=True)), zero) - ey**2
    var_j = sum((p * s * s for p, s in zip(pj, SCORES, strict=True)), zero) - ej**2
    cross = (table[y][j] * SCORES[y] * SCORES[j] for y in range(3) for j in range(3))
    return var_y, var_j, sum(cross, zero) - ey * ej


@pytest.mark.parametrize(
    ("agreement", "score", "tie_p", "tie_j"),
    [("0.8", "0.5", "0.2", "0.2"), ("0.7", "0.6", "0.1", "0.3"), ("0.55", "0.4", "0.3", "0.1")],
)
def test_row_follows_the_model_in_exact_fractions(
    agreement: str, score: str, tie_p: str, tie_j: str
) -> None:
    a, sc, tp, tj = (Fraction(x) for x in (agreement, score, tie_p, tie_j))
    table = _model(a, sc, tp, tj)
    assert sum(table[i][i] for i in range(3)) == a  # the agreement asked for
    var_y, var_j, cov = _moments(table)
    n, total = 60, 500
    lam = min(max(cov / ((1 + Fraction(n, total - n)) * var_j), Fraction(0)), Fraction(1))
    var = (var_y - 2 * lam * cov + lam**2 * var_j) / n + lam**2 * var_j / (total - n)
    row = people_sample_row(n, total=total, agreement=float(a), people_tie_rate=float(tp),
                            judge_tie_rate=float(tj), score=float(sc))  # fmt: skip
    assert row.weight == pytest.approx(float(lam), rel=1e-12)
    assert row.standard_error == pytest.approx(math.sqrt(var), rel=1e-12)
    assert row.correlation == pytest.approx(float(cov) / math.sqrt(var_y * var_j), rel=1e-12)
    assert row.effective_n == pytest.approx(float(var_y / var), rel=1e-12)
    people_se = math.sqrt(var_y / n)
    assert row.people_only_width / row.width == pytest.approx(people_se / math.sqrt(var), rel=1e-12)


def test_a_judge_that_never_ties_can_still_agree_on_the_untied() -> None:
    row = people_sample_row(50, total=400, agreement=0.75, people_tie_rate=0.2, judge_tie_rate=0)
    assert 0 < row.kappa < 1
    assert row.correlation > 0.5


def test_equal_tie_rates_make_the_correlation_cohen_s_kappa() -> None:
    row = people_sample_row(50, total=400, agreement=0.8, people_tie_rate=0.2)
    p = np.array([0.4, 0.2, 0.4])
    assert row.kappa == pytest.approx((0.8 - p @ p) / (1 - p @ p), rel=1e-12)
    assert row.correlation == pytest.approx(row.kappa, rel=1e-12)


def test_predicted_precision_matches_a_simulation_of_the_model() -> None:
    total, n = 1000, 120
    row = people_sample_row(n, total=total, agreement=0.75, people_tie_rate=0.2, score=0.55)
    table = _model(Fraction("0.75"), Fraction("0.55"), Fraction("0.2"), Fraction("0.2"))
    probs = np.array([float(x) for r in table for x in r])
    rng = np.random.default_rng(8)
    cells = rng.choice(9, size=(4000, total), p=probs / probs.sum())
    scores = np.array([1.0, 0.5, 0.0])
    y, j = scores[cells // 3], scores[cells % 3]
    parts = core.stratum_parts(y[:, :n], j[:, :n], j[:, n:], "plug-in")
    # 4,000 data sets: the standard deviation is known to about 1.1%.
    assert parts.estimate.std() == pytest.approx(row.standard_error, rel=0.04)
    assert np.sqrt(parts.variance).mean() == pytest.approx(row.standard_error, rel=0.03)


def test_non_inferiority_power_uses_the_margin_below_one_half() -> None:
    row = people_sample_row(80, total=1000, agreement=0.8, people_tie_rate=0.2, margin=0.1)
    from scipy import stats

    want = stats.t.sf(stats.t.isf(0.05, 79) - 0.1 / row.standard_error, 79)
    assert row.power == pytest.approx(want, rel=1e-12)
    assert row.power > row.people_only_power


@pytest.mark.parametrize("margin", [0.0, -0.1])
def test_a_boundary_at_or_above_one_half_is_the_same_one_sided_test(margin: float) -> None:
    from scipy import stats

    row = people_sample_row(80, total=1000, agreement=0.8, people_tie_rate=0.2, score=0.68,
                            margin=margin)  # fmt: skip
    effect = 0.68 - (0.5 - margin)  # the score's distance above the boundary 1/2 - margin
    want = stats.t.sf(stats.t.isf(0.05, 79) - effect / row.standard_error, 79)
    assert row.power == pytest.approx(want, rel=1e-12)


def test_the_mirror_image_has_the_same_precision() -> None:
    """A win for a loss: score 1 - s with the judge and people swapped alike; the test that
    the score is below b is the mirror's test that it is above 1 - b."""
    kwargs = {"total": 400, "agreement": 0.7, "people_tie_rate": 0.1, "judge_tie_rate": 0.25}
    row = people_sample_row(60, score=0.35, margin=0.05, **kwargs)  # type: ignore[arg-type]
    mirror = people_sample_row(60, score=0.65, margin=-0.05, **kwargs)  # type: ignore[arg-type]
    for name in ("standard_error", "expected_df", "weight", "width", "kappa"):
        assert getattr(mirror, name) == pytest.approx(getattr(row, name), rel=1e-12)


def test_plan_is_the_smallest_sample_meeting_the_target() -> None:
    plan = plan_people_sample(total=1000, agreement=0.7, people_tie_rate=0.2, margin=0.1, power=0.8)
    assert plan.n is not None
    assert plan.row is not None
    assert plan.row.power >= 0.8
    before = people_sample_row(
        plan.n - 1, total=1000, agreement=0.7, people_tie_rate=0.2, margin=0.1
    )
    assert before.power < 0.8 or before.expected_df < core.MIN_DEGREES_OF_FREEDOM
    assert plan.people_only_n is not None
    assert plan.people_only_n > plan.n
    width = plan_people_sample(total=1000, agreement=0.7, people_tie_rate=0.2, width=0.15)
    assert width.row is not None
    assert width.row.width <= 0.15


def test_a_judge_that_rarely_disagrees_needs_more_people_than_its_precision_asks() -> None:
    plan = plan_people_sample(total=1000, agreement=0.9, people_tie_rate=0.2, margin=0.1, power=0.8)
    assert plan.n is not None
    assert plan.n_normal is not None
    assert plan.n > plan.n_normal
    assert "too rare" in plan.note
    assert plan.row is not None
    assert plan.row.expected_df >= core.MIN_DEGREES_OF_FREEDOM


def test_unreachable_targets_say_so() -> None:
    plan = plan_people_sample(total=30, agreement=0.6, people_tie_rate=0.2, width=0.05)
    assert plan.n is None
    assert plan.row is None
    assert "no people's sample below the 30 comparisons" in plan.note


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"agreement": 0.99, "people_tie_rate": 0.2, "judge_tie_rate": 0.0},
         r"an agreement of 0.99 is not reachable .* chance gives 0.400, .* at most 0.800"),
        ({"agreement": 0.8, "people_tie_rate": 0.2, "score": 0.95},
         r"a people's score of 0.95 with a tie rate of 0.2 needs a negative"),
        ({"agreement": 1.5, "people_tie_rate": 0.2}, r"agreement must be in \[0, 1\], got 1.5"),
        ({"agreement": 0.8, "people_tie_rate": 0.2, "margin": 0.7},
         r"margin must be in \(-0.5, 0.5\), got 0.7"),
    ],
)  # fmt: skip
def test_impossible_inputs_are_refused(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        people_sample_row(50, total=500, **kwargs)


def test_plan_needs_exactly_one_target() -> None:
    with pytest.raises(ValueError, match="give exactly one target"):
        plan_people_sample(total=500, agreement=0.8, people_tie_rate=0.2)
    with pytest.raises(ValueError, match="a power target needs the non-inferiority margin"):
        plan_people_sample(total=500, agreement=0.8, people_tie_rate=0.2, power=0.8)
    with pytest.raises(ValueError, match=r"n must be below total = 50, got 50"):
        people_sample_row(50, total=50, agreement=0.8, people_tie_rate=0.2)


def test_rows_and_plans_are_json_ready() -> None:
    plan = plan_people_sample(total=1000, agreement=0.7, people_tie_rate=0.2, width=0.15)
    json.dumps(plan.to_dict(), allow_nan=False)
    json.dumps(people_sample_row(50, total=500, agreement=0.7, people_tie_rate=0.2).to_dict(),
               allow_nan=False)  # fmt: skip
