"""What hidden controls measure: the judge's tie rate and position choices where nothing
differs, with intervals over comparisons, and no test of the non-tie rate."""

from __future__ import annotations

import pytest

from blindtest.stats import intervals
from blindtest.stats.controls import describe_controls
from blindtest.stats.position import position_gate


def test_one_judge_controls_give_clopper_pearson_rates_over_comparisons() -> None:
    # 12 controls: 4 ties, 6 left, 2 right (one judge, one pass each).
    left = [1] * 6 + [0] * 6
    right = [0] * 6 + [1] * 2 + [0] * 4
    ties = [0] * 8 + [1] * 4
    found = describe_controls(left, right, ties)
    assert found.comparisons == 12
    assert (found.ties, found.left, found.right) == (4, 6, 2)
    assert found.tie_rate is not None
    assert found.left_share is not None
    cp_ties = intervals.clopper_pearson(4, 12)
    cp_left = intervals.clopper_pearson(6, 8)
    assert found.tie_rate.interval.lo == pytest.approx(cp_ties.lo, rel=1e-12)
    assert found.tie_rate.interval.hi == pytest.approx(cp_ties.hi, rel=1e-12)
    assert found.left_share.interval.estimate == pytest.approx(0.75)
    assert found.left_share.interval.lo == pytest.approx(cp_left.lo, rel=1e-12)
    assert found.p_position == pytest.approx(0.2890625)  # exact binomial, 6 of 8


def test_a_panel_tie_rate_counts_each_comparison_once() -> None:
    # Three judges: one comparison all tied, two with no tie.
    found = describe_controls([2, 1, 0], [1, 2, 0], [0, 0, 3])
    assert found.tie_rate is not None
    assert found.tie_rate.interval.estimate == pytest.approx(1 / 3)
    assert found.tie_rate.comparisons == 3
    assert found.tie_rate.picks == 9


def test_a_judge_that_never_ties_is_described_not_penalised() -> None:
    found = describe_controls([1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1], [0] * 6)
    assert found.tie_rate is not None
    assert found.tie_rate.interval.estimate == 0.0
    assert found.p_position == 1.0
    assert "verdict" not in found.to_dict()


def test_controls_that_only_tied_have_no_position_to_report() -> None:
    found = describe_controls([0, 0], [0, 0], [1, 2])
    assert found.left_share is None
    assert found.p_position is None
    assert found.tie_rate is not None
    assert found.tie_rate.interval.estimate == 1.0


def test_controls_feed_the_position_gate_as_more_comparisons() -> None:
    real_left, real_right = [1] * 30 + [0] * 30, [0] * 30 + [1] * 30
    control_left, control_right = [1] * 9 + [0], [0] * 9 + [1]
    pooled = position_gate(real_left + control_left, real_right + control_right)
    assert pooled.comparisons == 70
    assert pooled.share.estimate == pytest.approx(39 / 70)


def test_controls_record_is_json_ready_and_arguments_are_checked() -> None:
    record = describe_controls([1], [0], [1]).to_dict()
    assert record["unit"] == "comparison"
    assert set(record["tie_rate"]["interval"]) == {"estimate", "lo", "hi"}
    with pytest.raises(ValueError, match="one entry per control comparison, got 2, 1 and 1"):
        describe_controls([1, 0], [0], [1])
