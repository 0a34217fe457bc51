"""Pre-registered decisions: rules, estimands, outcomes, Holm across challengers, similarity."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

from blindtest.stats.decision import (
    DecisionRule,
    Planning,
    adjust_decisions,
    decide,
    decide_counts,
    parse_rule,
    similarity_decision,
)
from blindtest.stats.multiple import holm
from blindtest.stats.similarity import similarity_test
from blindtest.stats.sizing import decision_sample_size, similarity_sample_size


def scipy_upper(k: int, n: int, p: float) -> float:
    return float(stats.binomtest(k, n, p, alternative="greater").pvalue)


def scipy_lower(k: int, n: int, p: float) -> float:
    return float(stats.binomtest(k, n, p, alternative="less").pvalue)


# --- rules ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "rule", "margin", "lower", "upper"),
    [
        ("noninferior:0.05", "noninferior", 0.05, 0.45, None),
        ("superior", "superior", 0.0, 0.5, None),
        ("equivalent:0.1", "equivalent", 0.1, 0.4, 0.6),
        ("similar:0.3", "similar", 0.3, None, 0.3),
    ],
)
def test_rules_parse_to_their_null_boundaries(
    text: str, rule: str, margin: float, lower: float | None, upper: float | None
) -> None:
    parsed = parse_rule(text)
    assert (parsed.rule, parsed.margin) == (rule, margin)
    assert parsed.lower == pytest.approx(lower) if lower is not None else parsed.lower is None
    assert parsed.upper == pytest.approx(upper) if upper is not None else parsed.upper is None
    assert str(parsed) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("noninferior", r"noninferior needs a margin, got 'noninferior'"),
        ("noninferior:0.5", r"margin must be in \(0, 0.5\), got 0.5"),
        ("equivalent:-0.1", r"margin must be in \(0, 0.5\), got -0.1"),
        ("noninferior:five", r"margin must be a number, got 'five'"),
        ("superior:0.05", r"superior takes no margin, got 'superior:0.05'"),
        ("similar:1.2", r"pd0 must be in \(0, 1\), got 1.2"),
        ("better:0.1", r"rule must be one of .*; got 'better'"),
    ],
)
def test_bad_rules_are_refused_with_the_value(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_rule(text)


def test_bad_arguments_echo_the_value() -> None:
    with pytest.raises(ValueError, match=r"every score must be in \[0, 1\], got 1.5"):
        decide([1.0, 1.5], "superior")
    with pytest.raises(ValueError, match=r"scores\[1\] = 0.3333333333333333 is not a mean of 1"):
        decide([1.0, 1 / 3], "superior")
    with pytest.raises(ValueError, match=r"one count per score \(2\), got 3"):
        decide([1.0, 0.5], "superior", judges=[1, 1, 1])
    with pytest.raises(ValueError, match=r"estimand must be one of .*; got 'wins-plus-ties'"):
        decide([1.0], "superior", estimand="wins-plus-ties")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"alpha must be below 0.5 .*, got 0.6"):
        decide([1.0], "superior", alpha=0.6)
    with pytest.raises(ValueError, match="similarity_decision"):
        decide([1.0], "similar:0.3")
    with pytest.raises(ValueError, match=r"ties must be in \[0, 1\], got 1.3"):
        Planning(true=0.5, ties=1.3)


# --- outcomes, one judge, the untied share (exact binomial, conditional) --------------------


def test_noninferior_shown_when_the_lower_bound_clears_the_margin() -> None:
    result = decide_counts(60, 30, 40, "noninferior:0.05")
    assert result.outcome == "shown"
    assert result.method == "exact-binomial"
    assert (result.n, result.untied, result.tied) == (130, 100, 30)
    assert result.estimate == pytest.approx(0.6)
    assert result.p_value == pytest.approx(scipy_upper(60, 100, 0.45), rel=1e-12)
    assert result.p_refute == pytest.approx(scipy_lower(60, 100, 0.45), rel=1e-12)
    ci = stats.binomtest(60, 100).proportion_ci(confidence_level=0.9, method="exact")
    assert (result.interval.lo, result.interval.hi) == pytest.approx((ci.low, ci.high), rel=1e-10)
    assert result.interval.lo > 0.45
    assert result.interval_level == pytest.approx(0.9)
    assert result.claim_reads == "lower"
    assert result.tie_rate.estimate == pytest.approx(30 / 130)


def test_noninferior_refuted_when_worse_by_more_than_the_margin() -> None:
    result = decide_counts(25, 10, 75, "noninferior:0.05")
    assert result.outcome == "refuted"
    assert result.direction == "below"
    assert result.interval.hi < 0.45
    assert result.p_refute == pytest.approx(scipy_lower(25, 100, 0.45), rel=1e-12)


def test_noninferior_not_shown_gives_the_n_that_settles_it_at_the_planning_value() -> None:
    planning = Planning(true=0.5, ties=0.3, power=0.8)
    result = decide_counts(48, 20, 52, "noninferior:0.05", planning=planning)
    assert result.outcome == "not_shown"
    assert result.settle is not None
    expected = decision_sample_size("noninferior", 0.05, true=0.5, ties=0.3, power=0.8)
    assert result.settle == expected
    # The observed estimate (0.48) does not enter: the planning value does.
    assert result.settle.true == 0.5
    assert decide_counts(48, 20, 52, "noninferior:0.05").settle is None


def test_superior_outcomes() -> None:
    assert decide_counts(70, 0, 30, "superior").outcome == "shown"
    refuted = decide_counts(30, 0, 70, "superior")
    assert (refuted.outcome, refuted.direction) == ("refuted", "below")
    assert decide_counts(52, 0, 48, "superior").outcome == "not_shown"
    assert decide_counts(70, 0, 30, "superior").p_value == pytest.approx(scipy_upper(70, 100, 0.5))


def test_equivalent_shown_by_two_one_sided_tests() -> None:
    result = decide_counts(200, 50, 200, "equivalent:0.1")
    assert result.outcome == "shown"
    assert result.claim_reads == "both"
    assert result.p_lower == pytest.approx(scipy_upper(200, 400, 0.4), rel=1e-10)
    assert result.p_upper == pytest.approx(scipy_lower(200, 400, 0.6), rel=1e-10)
    assert result.p_value == max(result.p_lower or 0, result.p_upper or 0)
    assert 0.4 < result.interval.lo < result.interval.hi < 0.6


@pytest.mark.parametrize(("wins", "losses", "direction"), [(90, 10, "above"), (10, 90, "below")])
def test_equivalent_refuted_outside_the_margin_on_either_side(
    wins: int, losses: int, direction: str
) -> None:
    result = decide_counts(wins, 0, losses, "equivalent:0.1")
    assert (result.outcome, result.direction) == ("refuted", direction)
    assert result.interval.lo > 0.6 or result.interval.hi < 0.4


def test_equivalent_not_shown_with_too_few_comparisons() -> None:
    assert decide_counts(10, 0, 10, "equivalent:0.1").outcome == "not_shown"


def test_ties_leave_the_untied_share_test_unchanged() -> None:
    few, many = (
        decide_counts(55, 0, 45, "noninferior:0.05"),
        decide_counts(55, 400, 45, "noninferior:0.05"),
    )
    assert few.p_value == many.p_value
    assert few.interval == many.interval
    assert many.tie_rate.estimate == pytest.approx(400 / 500)


def test_every_comparison_tied_decides_nothing_on_the_untied_share() -> None:
    result = decide_counts(0, 40, 0, "noninferior:0.05")
    assert result.outcome == "not_shown"
    assert math.isnan(result.estimate)
    assert result.to_dict()["estimate"] is None
    assert result.to_dict()["interval"] == {"estimate": None, "lo": 0.0, "hi": 1.0}


@pytest.mark.parametrize("rule", ["noninferior:0.05", "superior", "equivalent:0.15"])
def test_outcome_and_interval_agree_for_every_small_table(rule: str) -> None:
    parsed = parse_rule(rule)
    for wins in range(0, 26):
        for losses in range(0, 26 - wins):
            if wins + losses == 0:
                continue
            result = decide_counts(wins, 3, losses, parsed)
            lo, hi = result.interval.lo, result.interval.hi
            lower = parsed.lower or 0.0
            upper = parsed.upper if parsed.upper is not None else 2.0
            shown = lo >= lower and hi <= upper
            refuted = hi <= lower or lo >= upper
            assert (result.outcome == "shown") == shown, (wins, losses)
            assert (result.outcome == "refuted") == refuted, (wins, losses)


def test_the_result_is_frozen_and_serialises_intervals_in_the_report_shape() -> None:
    result = decide_counts(60, 30, 40, "noninferior:0.05")
    with pytest.raises(AttributeError):
        result.outcome = "refuted"  # type: ignore[misc]
    data = result.to_dict()
    assert set(data["interval"]) == {"estimate", "lo", "hi"}
    assert set(data["tie_rate"]) == {"estimate", "lo", "hi"}
    assert data["outcome"] in ("shown", "refuted", "not_shown")
    assert data["unit"] == "comparison"


# --- the tie-inclusive estimand (mean score) ---------------------------------------------------


def test_mean_score_counts_a_tie_as_half_a_win() -> None:
    result = decide_counts(60, 30, 40, "noninferior:0.05", estimand="mean-score")
    assert result.method == "exact-unconditional"
    assert result.estimate == pytest.approx((60 + 15) / 130)
    assert result.outcome == "shown"


def test_all_ties_show_non_inferiority_on_the_mean_score_only() -> None:
    # 40 ties: the mean score is exactly 1/2, and no law with mean <= 0.45 makes 40 ties in a
    # row likelier than 0.9^40 = 0.015 (ties are at most 90% of comparisons there); the
    # p-value also holds the tables Tango's statistic ranks as extreme.
    mean = decide_counts(0, 40, 0, "noninferior:0.05", estimand="mean-score")
    assert mean.outcome == "shown"
    assert 0.9**40 <= mean.p_value <= 0.05
    assert decide_counts(0, 40, 0, "noninferior:0.05").outcome == "not_shown"


def test_mean_score_refuted_when_far_below() -> None:
    result = decide_counts(10, 20, 70, "noninferior:0.05", estimand="mean-score")
    assert result.outcome == "refuted"
    assert result.interval.hi < 0.45


# --- panels (betting) ---------------------------------------------------------------------


def test_a_panel_uses_the_betting_test_whatever_its_scores() -> None:
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 7, size=400) / 6  # means of three judges' 1, 1/2, 0
    result = decide(scores, "equivalent:0.1", judges=3)
    assert result.method == "betting"
    # Whole-number scores from a panel still go to the betting test: the design decides.
    whole = decide(np.round(scores), "superior", judges=3)
    assert whole.method == "betting"
    assert decide(np.round(scores), "superior").method == "exact-binomial"


def test_a_panel_mean_of_one_half_is_a_tie() -> None:
    scores = [0.5, 0.75, 0.25, 1.0, 0.5]
    result = decide(scores, "superior", judges=2)
    assert (result.untied, result.tied) == (3, 2)
    assert result.estimate == pytest.approx((0.75 + 0.25 + 1.0) / 3)


def test_panel_outcomes_shown_and_refuted() -> None:
    rng = np.random.default_rng(7)
    good = np.clip(rng.integers(3, 7, size=300) / 6, 0, 1)
    assert decide(good, "noninferior:0.05", judges=3).outcome == "shown"
    bad = rng.integers(0, 3, size=300) / 6
    assert decide(bad, "noninferior:0.05", judges=3).outcome == "refuted"
    settle = decide(
        rng.integers(0, 7, size=20) / 6, "noninferior:0.05", judges=3, planning=Planning(0.5)
    ).settle
    assert settle is not None
    assert "panel" in settle.basis


# --- several challengers: Holm ----------------------------------------------------------------


def test_holm_across_challengers_can_withdraw_a_claim() -> None:
    results = [
        decide_counts(60, 0, 40, "noninferior:0.05"),
        decide_counts(55, 0, 45, "noninferior:0.05"),
        decide_counts(50, 0, 50, "noninferior:0.05"),
    ]
    p_values = [r.p_value for r in results]
    assert results[1].outcome == "shown"
    adjusted = adjust_decisions(results)
    assert [r.p_adjusted for r in adjusted] == pytest.approx(list(holm(p_values)))
    assert [r.adjustment for r in adjusted] == ["holm:3"] * 3
    assert adjusted[0].outcome == "shown"
    assert adjusted[1].outcome == "not_shown"
    assert adjusted[1].p_adjusted is not None
    assert adjusted[1].p_adjusted > 0.05


def test_holm_refuses_decisions_of_different_rules() -> None:
    with pytest.raises(ValueError, match="share rule, margin, alpha and estimand"):
        adjust_decisions(
            [decide_counts(5, 0, 5, "superior"), decide_counts(5, 0, 5, "noninferior:0.1")]
        )


# --- similar:PD0 -------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["triangle", "pair"])
def test_similarity_decision_wraps_the_similarity_test(protocol: str) -> None:
    for correct in range(0, 61):
        result = similarity_decision(correct, 60, "similar:0.3", protocol=protocol)  # type: ignore[arg-type]
        test = similarity_test(correct, 60, 0.3, protocol=protocol)  # type: ignore[arg-type]
        assert (result.outcome == "shown") == test.similar
        assert result.p_value == test.p_value
        assert result.claim_reads == "upper"
        if result.outcome == "shown":
            assert result.interval.hi <= 0.3 + 1e-12
        # Refuted: a difference beyond PD0 shown, pd's lower bound above it.
        assert (result.outcome == "refuted") == (result.interval.lo > 0.3), correct


def test_similarity_refuted_and_not_shown_with_the_n_to_settle() -> None:
    refuted = similarity_decision(45, 60, 0.3, protocol="triangle")
    assert refuted.outcome == "refuted"
    middle = similarity_decision(28, 60, 0.3, protocol="triangle", planning=Planning(true=0.0))
    assert middle.outcome == "not_shown"
    # At the planning value (no difference) 39 trials would do; this run's data do not enter.
    assert middle.settle == similarity_sample_size(0.3, protocol="triangle", pd=0.0)
    assert middle.settle.smallest_n == 39
    with pytest.raises(ValueError, match="takes a similar:PD0 rule"):
        similarity_decision(5, 10, "superior")


def test_decision_rule_round_trips_through_its_text() -> None:
    for text in ("noninferior:0.05", "superior", "equivalent:0.1", "similar:0.25"):
        assert str(parse_rule(str(parse_rule(text)))) == text
    assert parse_rule(DecisionRule("superior", 0.0)) == DecisionRule("superior", 0.0)


def test_every_decision_result_is_frozen_slotted_and_json_ready() -> None:
    import dataclasses
    import json

    from blindtest.stats.anytime import sequential_decision
    from blindtest.stats.mean_score import mean_score_test
    from blindtest.stats.sensitivity import sensitivity_check
    from blindtest.stats.sizing import decision_power_table

    planning = Planning(true=0.5, ties=0.3)
    results: list[Any] = [
        decide_counts(48, 20, 52, "noninferior:0.05", planning=planning),
        decide_counts(0, 40, 0, "noninferior:0.05"),
        similarity_decision(28, 60, 0.3, planning=Planning(true=0.0)),
        decision_power_table([10], "superior", true=0.6)[0],
        sensitivity_check([1.0, 1.0, 0.0, 0.5]),
        sequential_decision([1.0, 0.0, 0.5] * 10, "superior"),
        mean_score_test(5, 3, 2, lower=0.45, upper=0.55),
        parse_rule("equivalent:0.1"),
        planning,
    ]
    for result in results:
        json.dumps(result.to_dict(), allow_nan=False)
        assert dataclasses.is_dataclass(result)
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(result, dataclasses.fields(result)[0].name, None)
        assert hasattr(type(result), "__slots__")
