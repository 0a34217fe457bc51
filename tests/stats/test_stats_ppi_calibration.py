"""The judge against people on the sampled comparisons: agreement with its interval, the
confusion of verdicts, kappa as the agreement module computes it, and the judge's stated
confidence scored (Brier) and binned."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest
from scipy import stats

from blindtest.stats import clopper_pearson, kappa_with_se, wilson
from blindtest.stats.ppi_calibration import judge_calibration

PEOPLE = ["win", "win", "tie", "loss", "win", "loss", "tie", "win", "loss", "win"]
JUDGE = ["win", "loss", "tie", "loss", "win", "win", "win", "win", "loss", "tie"]
CONFIDENCE: list[float | None] = [0.95, 0.9, 0.55, 0.8, 0.92, 0.7, None, 0.85, 0.75, 0.6]


def test_agreement_is_the_share_of_equal_verdicts_with_wilson() -> None:
    result = judge_calibration(PEOPLE, JUDGE)
    assert (result.n, result.agreed) == (10, 6)
    assert result.agreement == wilson(6, 10)
    exact = judge_calibration(PEOPLE, JUDGE, interval_method="clopper-pearson")
    assert exact.agreement == clopper_pearson(6, 10)


def test_confusion_counts_people_by_row_and_judge_by_column() -> None:
    result = judge_calibration(PEOPLE, JUDGE)
    assert result.labels == ("win", "tie", "loss")
    assert result.confusion == ((3, 1, 1), (1, 1, 0), (1, 0, 2))
    assert sum(map(sum, result.confusion)) == 10
    assert sum(result.confusion[i][i] for i in range(3)) == result.agreed


def test_kappa_is_the_agreement_module_s_on_the_labels_given() -> None:
    result = judge_calibration(PEOPLE, JUDGE)
    assert result.kappa == kappa_with_se(PEOPLE, JUDGE)
    assert "kappa depends on the coding" in result.coding


def test_position_coding_keeps_the_share_and_changes_kappa() -> None:
    # The same comparisons coded by position: A was on the left in the first five.
    flip = {"win": "right", "loss": "left", "tie": "tie"}
    keep = {"win": "left", "loss": "right", "tie": "tie"}

    def by_position(verdicts: list[str]) -> list[str]:
        return [(keep if i < 5 else flip)[v] for i, v in enumerate(verdicts)]

    labels = ("left", "tie", "right")
    side = judge_calibration(PEOPLE, JUDGE)
    position = judge_calibration(by_position(PEOPLE), by_position(JUDGE), labels=labels)
    assert position.agreement == side.agreement
    assert position.kappa is not None
    assert side.kappa is not None
    assert position.kappa.statistic != pytest.approx(side.kappa.statistic)


def test_brier_score_by_exact_fractions_with_a_t_interval() -> None:
    result = judge_calibration(PEOPLE, JUDGE, confidence=CONFIDENCE)
    pairs = [
        (Fraction(str(c)), p == j)
        for c, p, j in zip(CONFIDENCE, PEOPLE, JUDGE, strict=True)
        if c is not None
    ]
    scores = [(c - int(ok)) ** 2 for c, ok in pairs]
    mean = sum(scores, Fraction(0)) / len(scores)
    assert result.with_confidence == 9
    assert result.brier is not None
    assert result.brier.estimate == pytest.approx(float(mean), rel=1e-15)
    var = sum(((s - mean) ** 2 for s in scores), Fraction(0)) / (len(scores) - 1)
    half = stats.t.isf(0.025, len(scores) - 1) * math.sqrt(var) / math.sqrt(len(scores))
    assert result.brier.hi - result.brier.estimate == pytest.approx(half, rel=1e-12)
    assert result.mean_confidence == pytest.approx(float(sum(c for c, _ in pairs) / 9))


def test_bins_hold_each_confidence_once_with_their_agreement() -> None:
    result = judge_calibration(PEOPLE, JUDGE, confidence=CONFIDENCE)
    assert [b.n for b in result.bins] == [0, 1, 1, 2, 2, 3]
    top = result.bins[-1]
    assert (top.lo, top.hi) == (0.9, 1.0)
    assert top.mean_confidence == pytest.approx((0.95 + 0.9 + 0.92) / 3)
    assert top.agreement == wilson(2, 3)  # said 0.9 and was wrong
    assert math.isnan(result.bins[0].agreement.estimate)
    edge = judge_calibration(["win"], ["win"], confidence=[1.0], bins=(0.0, 0.5, 1.0))
    assert [b.n for b in edge.bins] == [0, 1]  # 1.0 falls in the last bin


def test_without_confidence_there_is_no_brier_score() -> None:
    result = judge_calibration(PEOPLE, JUDGE)
    assert result.brier is None
    assert result.with_confidence == 0
    assert all(b.n == 0 for b in result.bins)
    assert math.isnan(result.mean_confidence)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"people": ["win", "draw"]},
            r"people\[1\] must be one of \('win', 'tie', 'loss'\), got 'draw'",
        ),
        ({"judge": ["win"]}, r"one verdict each per comparison, got 2 and 1"),
        ({"confidence": [0.5, 1.2]}, r"confidence\[1\] must be in \[0, 1\], got 1.2"),
        ({"confidence": [0.5]}, r"confidence needs one value per comparison \(2\), got 1"),
        ({"bins": (0.2, 1.0)}, r"bins must cover \[0, 1\], got \(0.2, 1.0\)"),
        ({"labels": ("win", "win")}, r"labels must be at least two distinct verdicts"),
        ({"interval_method": "wald"}, r"interval_method must be one of"),
    ],
)
def test_bad_arguments_are_refused_with_the_value(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"people": ["win", "tie"], "judge": ["win", "loss"]}
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        judge_calibration(**args)  # type: ignore[arg-type]


def test_result_is_json_ready() -> None:
    result = judge_calibration(PEOPLE, JUDGE, confidence=CONFIDENCE)
    text = json.dumps(result.to_dict(), allow_nan=False)
    assert '"confusion": [[3, 1, 1], [1, 1, 0], [1, 0, 2]]' in text
    single = judge_calibration(["win"], ["win"])
    assert single.kappa is None
    json.dumps(single.to_dict(), allow_nan=False)
