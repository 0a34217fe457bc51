"""The length tell's sentence follows its own numbers: a preference for the longer answer that
is clearly above chance is never called "not clearly more than half"."""

from __future__ import annotations

from typing import Any

from scipy.stats import binomtest

from blindtest.analysis.tells import _length_preference


def _inputs(followed: int, n: int) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    design = {"alpha": 0.05}
    # The bot says the left answer is longer on every trial; the judge follows it `followed` times.
    bot = {
        "picks": [{"trial": t, "pick": "left"} for t in range(n)],
        "p_value": 0.001,
        "correct": n,
        "n": n,
    }
    per_trial = [{"trial": t, "pick": "left" if t < followed else "right"} for t in range(n)]
    return design, bot, {"per_trial": per_trial, "judges": ["ann"]}


def test_a_significant_but_partial_length_preference_is_said_to_be_above_chance() -> None:
    # 70 of 100: p about 8e-5, share 0.70 under the 0.75 that would let length explain it.
    assert binomtest(70, 100, 0.5).pvalue < 0.001
    (line,) = _length_preference(*_inputs(70, 100))  # type: ignore[arg-type]
    assert "more often than chance" in line
    assert "not clearly more than half" not in line
    assert "explains only part" in line


def test_a_length_preference_within_chance_is_not_clearly_more_than_half() -> None:
    assert binomtest(11, 20, 0.5).pvalue > 0.05
    (line,) = _length_preference(*_inputs(11, 20))  # type: ignore[arg-type]
    assert "not clearly more than half" in line


def test_a_strong_length_preference_says_length_may_explain_it() -> None:
    (line,) = _length_preference(*_inputs(90, 100))  # type: ignore[arg-type]
    assert "may be a preference for length" in line


def test_half_or_fewer_says_only() -> None:
    (line,) = _length_preference(*_inputs(8, 20))  # type: ignore[arg-type]
    assert "in only 8 of 20" in line
