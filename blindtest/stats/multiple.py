"""Multiple-comparison adjustments over p-values from several reports (same as R's p.adjust).

Spec 000: screening many model pairs and keeping the best p-value is a multiple comparison.
Adjusted p-values are returned in the input order, capped at 1; compare each with alpha.
Pure functions; no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from blindtest.stats.intervals import _check_closed

__all__ = ["bonferroni", "holm"]


def _check_p_values(p_values: Sequence[float]) -> list[float]:
    return [_check_closed(f"p_values[{i}]", p) for i, p in enumerate(p_values)]


def bonferroni(p_values: Sequence[float]) -> tuple[float, ...]:
    """Bonferroni: ``min(1, m p)`` for m p-values."""
    values = _check_p_values(p_values)
    m = len(values)
    return tuple(min(1.0, m * p) for p in values)


def holm(p_values: Sequence[float]) -> tuple[float, ...]:
    """Holm (1979) step-down adjustment, as R's ``p.adjust(p, "holm")``.

    The i-th smallest p becomes ``max_{j <= i} min(1, (m - j + 1) p_(j))``. Uniformly more
    powerful than Bonferroni with the same family-wise error guarantee.
    """
    values = _check_p_values(p_values)
    m = len(values)
    order = sorted(range(m), key=lambda i: values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * values[index]))
        adjusted[index] = running
    return tuple(adjusted)
