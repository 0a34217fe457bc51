"""Holm and Bonferroni adjustments over p-values from several reports (R's p.adjust)."""

from __future__ import annotations

import pytest

from blindtest.stats import bonferroni, holm

# Expected values worked by hand from the definitions in R's p.adjust documentation:
#   bonferroni: pmin(1, n * p)
#   holm:       o <- order(p); pmin(1, cummax((n - seq_len(n) + 1) * p[o]))[order(o)]
P = [0.01, 0.04, 0.03, 0.005, 0.5]


def test_bonferroni_multiplies_by_the_count_and_caps_at_one() -> None:
    assert bonferroni(P) == pytest.approx((0.05, 0.2, 0.15, 0.025, 1.0), rel=1e-15)


def test_holm_steps_down_and_stays_monotone() -> None:
    # sorted: 0.005*5 = 0.025, 0.01*4 = 0.04, 0.03*3 = 0.09, 0.04*2 = 0.08 -> 0.09, 0.5*1 = 0.5
    assert holm(P) == pytest.approx((0.04, 0.09, 0.09, 0.025, 0.5), rel=1e-15)


def test_holm_is_never_larger_than_bonferroni() -> None:
    for adjusted_holm, adjusted_bonferroni in zip(holm(P), bonferroni(P), strict=True):
        assert adjusted_holm <= adjusted_bonferroni


def test_ties_and_caps() -> None:
    assert holm([0.01, 0.01]) == (0.02, 0.02)
    assert holm([0.6, 0.7]) == (1.0, 1.0)
    assert holm([]) == ()
    assert bonferroni([]) == ()
    assert holm([0.3]) == (0.3,)


@pytest.mark.parametrize("adjust", [holm, bonferroni])
def test_bad_p_values_are_refused(adjust: object) -> None:
    with pytest.raises(ValueError, match=r"p_values\[1\] must be in \[0, 1\], got 1.5"):
        adjust([0.2, 1.5])  # type: ignore[operator]
