"""Sequential decisions: stop at the first crossing of an anytime-valid confidence sequence."""

from __future__ import annotations

import numpy as np
import pytest

from blindtest.stats.anytime import crossing_times, sequential_decision
from blindtest.stats.betting import betting_bound


def bernoulli(seed: int, p: float, n: int) -> np.ndarray:
    return (np.random.default_rng(seed).random(n) < p).astype(float)


def test_a_better_challenger_is_shown_non_inferior_and_stops_there() -> None:
    result = sequential_decision(bernoulli(3, 0.55, 2000), "noninferior:0.05")
    assert (result.outcome, result.stop) == ("shown", "shown")
    assert result.stopped_at == result.comparisons
    assert result.interval.lo > 0.45  # the running intersection has crossed the margin
    assert result.e_value >= 20
    assert result.interval_level == pytest.approx(0.9)


def test_a_much_worse_challenger_is_refuted() -> None:
    result = sequential_decision(bernoulli(4, 0.3, 2000), "noninferior:0.05")
    assert (result.outcome, result.direction) == ("refuted", "below")
    assert result.interval.hi < 0.45
    assert result.e_refute >= 20


def test_reaching_the_cap_is_a_futility_stop_not_a_refutation() -> None:
    result = sequential_decision(bernoulli(5, 0.5, 2000), "superior", max_comparisons=300)
    assert (result.outcome, result.stop) == ("not_shown", "max_comparisons")
    assert result.stopped_at is None
    assert result.comparisons == 300
    ended = sequential_decision(bernoulli(5, 0.5, 40), "superior")
    assert (ended.outcome, ended.stop) == ("not_shown", "ended")


def test_for_the_untied_share_a_tie_is_not_an_observation() -> None:
    x = bernoulli(6, 0.6, 600)
    with_ties = np.insert(x, np.arange(0, 600, 2), 0.5)  # a tie before every other comparison
    plain = sequential_decision(x, "noninferior:0.05")
    tied = sequential_decision(with_ties, "noninferior:0.05")
    assert plain.outcome == tied.outcome == "shown"
    assert tied.observations == plain.observations
    assert tied.comparisons > plain.comparisons  # counted in comparisons, ties included
    assert tied.interval == plain.interval
    # For the mean score every comparison is an observation, a tie scoring 1/2.
    mean = sequential_decision(with_ties, "noninferior:0.05", estimand="mean-score")
    assert mean.observations == mean.comparisons


def test_a_panel_comparison_is_one_observation_its_judges_mean() -> None:
    rng = np.random.default_rng(8)
    scores = rng.integers(2, 7, size=500) / 6  # three judges, mostly for the challenger
    result = sequential_decision(scores, "noninferior:0.05", judges=3)
    assert result.outcome == "shown"
    assert "judges' mean" in result.observation
    with pytest.raises(ValueError, match="is not a mean of 1"):
        sequential_decision(scores, "noninferior:0.05")


def test_equivalence_needs_both_sides_and_refutes_on_either() -> None:
    assert sequential_decision(bernoulli(9, 0.5, 4000), "equivalent:0.1").outcome == "shown"
    above = sequential_decision(bernoulli(10, 0.8, 4000), "equivalent:0.1")
    assert (above.outcome, above.direction) == ("refuted", "above")
    below = sequential_decision(bernoulli(11, 0.2, 4000), "equivalent:0.1")
    assert (below.outcome, below.direction) == ("refuted", "below")


def test_crossing_times_match_the_decision_run_by_run() -> None:
    rng = np.random.default_rng(12)
    x = (rng.random((30, 400)) < 0.52).astype(float)
    claim, refute, _ = crossing_times(x, "noninferior:0.05")
    for row in range(30):
        result = sequential_decision(x[row], "noninferior:0.05")
        if result.outcome == "shown":
            assert claim[row] == result.observations
        elif result.outcome == "refuted":
            assert refute[row] == result.observations
        else:
            assert claim[row] == 0
            assert refute[row] == 0


def test_the_interval_is_the_running_intersection() -> None:
    x = bernoulli(13, 0.5, 300)
    result = sequential_decision(x, "superior")
    lows = [betting_bound(x[:t], alpha=0.05, side="above", horizon=None) for t in (50, 150, 300)]
    assert result.interval.lo >= max(lows) - 1e-12


def test_bad_sequential_arguments_echo_the_value() -> None:
    with pytest.raises(ValueError, match=r"max_comparisons must be an integer >= 1, got 0"):
        sequential_decision([1.0], "superior", max_comparisons=0)
    with pytest.raises(ValueError, match="no sequential form"):
        sequential_decision([1.0], "similar:0.3")
