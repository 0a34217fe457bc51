"""Several judges on shared trials: exact randomization test and chance-corrected beta-binomial."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, stats

from blindtest.stats import (
    beta_binomial,
    binomial_p_value,
    judge_panel,
    randomization_test,
    triangle_test,
)
from blindtest.stats.judges import _LogLik

PICKS: dict[str, list[int | None]] = {
    "alice": [1, 2, 3, 1, 2, 3],
    "bob": [1, 1, 3, 2, 2, None],
    "carol": [2, 2, 3, 1, 3, 3],
}
ODD = [1, 2, 3, 3, 2, 1]


def test_randomization_p_value_equals_brute_force_enumeration() -> None:
    # Every one of the 3^6 odd-position assignments is equally likely under the null.
    observed = sum(
        pick == ODD[t] for row in PICKS.values() for t, pick in enumerate(row) if pick is not None
    )
    at_least = 0
    for odd in itertools.product((1, 2, 3), repeat=len(ODD)):
        total = sum(
            pick == odd[t]
            for row in PICKS.values()
            for t, pick in enumerate(row)
            if pick is not None
        )
        at_least += total >= observed
    exact = Fraction(at_least, 3 ** len(ODD))
    result = randomization_test(PICKS, ODD)
    assert result.statistic == observed
    assert result.p_value == pytest.approx(float(exact), rel=1e-12)
    assert result.n_judgements == 17
    assert result.expected == pytest.approx(17 / 3, rel=1e-15)


def test_one_judge_reduces_to_the_triangle_binomial() -> None:
    rng = np.random.default_rng(3)
    odd = [int(x) for x in rng.integers(1, 4, 30)]
    picks = [o if rng.random() < 0.5 else int(rng.integers(1, 4)) for o in odd]
    correct = sum(p == o for p, o in zip(picks, odd, strict=True))
    result = randomization_test({"solo": picks}, odd)
    assert result.p_value == pytest.approx(
        binomial_p_value(correct, 30, 1 / 3, "greater"), rel=1e-12
    )


def test_shared_tells_do_not_inflate_the_pooled_false_positive_rate() -> None:
    # Null: three judges who cannot see a difference but all follow the same visible cue, so
    # they pick the same position on every trial. A naive pooled binomial over 3 x 20 calls
    # would reject far too often; the randomization test keeps its level. Seed 11, 2,000 runs.
    rng = np.random.default_rng(11)
    runs, trials, alpha = 2000, 20, 0.05
    naive = exact = 0
    for _ in range(runs):
        odd = [int(x) for x in rng.integers(1, 4, trials)]
        cue = [int(x) for x in rng.integers(1, 4, trials)]
        picks = {"a": cue, "b": cue, "c": cue}
        result = randomization_test(picks, odd)
        exact += result.p_value <= alpha
        naive += binomial_p_value(result.statistic, 3 * trials, 1 / 3, "greater") <= alpha
    assert exact / runs <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)
    assert naive / runs > 2 * alpha


def test_panel_reports_each_judge_and_the_pooled_analyses() -> None:
    panel = judge_panel(PICKS, ODD)
    assert panel.judges == ("alice", "bob", "carol")
    assert panel.per_judge["bob"] == triangle_test(3, 5)  # None means not seen
    assert panel.p_value == randomization_test(PICKS, ODD).p_value
    assert panel.beta_binomial.correct == (4, 3, 2)
    assert panel.beta_binomial.n == (6, 5, 6)
    json.dumps(panel.to_dict(), allow_nan=False)


def test_beta_binomial_likelihood_matches_numerical_integration() -> None:
    # P(k) = int Bin(k; n, 1/3 + 2 pd / 3) Beta(pd; a, b) dpd,
    # with a = mu (1 - g) / g and b = (1 - mu) (1 - g) / g.
    def direct(mu: float, g: float, k: int, n: int) -> float:
        a, b = mu * (1 - g) / g, (1 - mu) * (1 - g) / g

        def integrand(x: float) -> float:
            return float(stats.binom.pmf(k, n, 1 / 3 + 2 * x / 3) * stats.beta.pdf(x, a, b))

        return math.log(integrate.quad(integrand, 0, 1, epsabs=0, epsrel=1e-12, limit=200)[0])

    counts, sizes = [10, 5, 15], [20, 20, 20]
    loglik = _LogLik(counts, sizes, 1 / 3)
    for mu, g in [(0.3, 0.2), (0.6, 0.05), (0.2, 0.3)]:
        expected = sum(direct(mu, g, k, n) for k, n in zip(counts, sizes, strict=True))
        assert loglik(mu, g) == pytest.approx(expected, rel=1e-9)
    # gamma -> 0 is the plain binomial at Pc = 1/3 + 2 mu / 3; mu = 0 is the null.
    binomial = sum(stats.binom.logpmf(k, 20, 1 / 3 + 0.2) for k in counts)
    assert loglik(0.3, 0.0) == pytest.approx(binomial, rel=1e-12)
    null = sum(stats.binom.logpmf(k, 20, 1 / 3) for k in counts)
    assert loglik(0.0, 0.5) == pytest.approx(null, rel=1e-12)


def test_beta_binomial_fit_and_likelihood_ratio_test() -> None:
    result = beta_binomial([9, 14, 7, 12], [20, 20, 20, 20])
    assert 0.0 < result.pd.lo < result.pd.estimate < result.pd.hi < 1.0
    assert result.statistic == pytest.approx(2 * (result.loglik - result.loglik_null), rel=1e-12)
    assert result.df == 2
    assert result.p_value == pytest.approx(stats.chi2.sf(result.statistic, 2), rel=1e-12)
    assert result.p_value < 0.01
    assert result.pc.estimate == pytest.approx(1 / 3 + 2 * result.pd.estimate / 3, rel=1e-12)


def test_judges_at_chance_give_no_evidence() -> None:
    result = beta_binomial([5, 7, 6, 6], [18, 18, 18, 18])
    assert result.pd.lo == 0.0
    assert result.p_value > 0.5


def test_confidence_edges_of_the_pooled_interval() -> None:
    whole = beta_binomial([9, 14], [20, 20], confidence_level=1.0)
    point = beta_binomial([9, 14], [20, 20], confidence_level=0.0)
    assert (whole.pd.lo, whole.pd.hi) == (0.0, 1.0)
    assert point.pd.lo == point.pd.estimate == point.pd.hi


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: randomization_test({"a": [1, 2]}, [1, 2, 3]),
            r"judge 'a' has 2 picks, expected one per trial \(3\)",
        ),
        (
            lambda: randomization_test({"a": [4]}, [1]),
            r"judge 'a' trial 1: pick must be 1, 2 or 3, got 4",
        ),
        (
            lambda: randomization_test({"a": [1]}, [0]),
            r"odd_positions\[0\] must be 1, 2 or 3, got 0",
        ),
        (lambda: randomization_test({}, [1]), r"picks must hold at least one judge, got 0"),
        (
            lambda: judge_panel({"a": [None, None]}, [1, 2]),
            r"number of picks by judge 'a' must be an integer >= 1, got 0",
        ),
        (
            lambda: beta_binomial([3], [2]),
            r"correct\[0\] must be in \[0, n\[0\]\] = \[0, 2\], got 3",
        ),
        (lambda: beta_binomial([1, 2], [3]), r"correct and n must list the same judges"),
    ],
)
def test_bad_arguments_are_refused(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
