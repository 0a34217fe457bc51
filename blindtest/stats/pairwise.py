"""Several candidates, pair by pair: who was preferred to whom, and each candidate against a
reference.

The unit is one comparison (one judge's verdict on two answers to one prompt). Ties are
counted and reported but left out of the win rate and the test, as in the two-sided
preference analysis: a tie says nothing about which candidate is preferred. Each pair gets
the Wilson interval of its untied win rate and the exact two-sided binomial test against 1/2
(R's ``binom.test``; `blindtest.stats.binomial`), and the p-values are Holm-adjusted across
the family (every pair that met, or every candidate against the reference). Pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from blindtest.stats.intervals import Interval, _check_alpha, _check_confidence, result_to_dict
from blindtest.stats.multiple import holm
from blindtest.stats.preference import preference_test

__all__ = [
    "PairRecord",
    "PairTable",
    "Tally",
    "pair_table",
    "reference_table",
    "tally",
]

#: How a tie enters the per-pair and against-reference figures (written into the report).
TIES_RULE = "ties are counted and shown, and left out of the win rate and the test"


@dataclass(frozen=True, slots=True)
class Tally:
    """Outcomes between two candidates: ``first`` preferred ``wins`` times, ``second``
    preferred ``losses`` times, ``ties`` ties."""

    first: str
    second: str
    wins: int
    losses: int
    ties: int


@dataclass(frozen=True, slots=True)
class PairRecord:
    """One pair: ``first``'s untied win rate against ``second`` (Wilson interval), the exact
    two-sided p against 1/2, the Holm-adjusted p across the family, and whether that reaches
    alpha. ``n`` = wins + losses; with n = 0 the win rate is undefined (null) and p is 1."""

    first: str
    second: str
    wins: int
    losses: int
    ties: int
    n: int
    win_rate: Interval
    p_value: float
    p_holm: float
    significant: bool

    def to_dict(self) -> dict[str, Any]:
        return result_to_dict(self)


@dataclass(frozen=True, slots=True)
class PairTable:
    """Every pair of the family; ``family`` says which ("pairs" or "against NAME")."""

    pairs: tuple[PairRecord, ...]
    family: str
    alpha: float
    confidence_level: float
    unit: str = "comparison"
    ties: str = TIES_RULE
    interval_method: str = "wilson"
    adjustment: str = "holm"

    def to_dict(self) -> dict[str, Any]:
        return result_to_dict(self)


def tally(
    candidates: Sequence[str], comparisons: Iterable[tuple[str, str, str | None]]
) -> tuple[Tally, ...]:
    """Count ``(left, right, winner)`` outcomes (winner a candidate's name, None for a tie)
    into one `Tally` per pair that met, each pair ``(first, second)`` in the candidates'
    order. Raises ValueError for an unknown name or a winner that was not in the comparison."""
    order = {name: n for n, name in enumerate(candidates)}
    counts: dict[tuple[str, str], list[int]] = {}
    for left, right, winner in comparisons:
        for name in (left, right):
            if name not in order:
                raise ValueError(f"unknown candidate {name!r} in a comparison")
        if left == right:
            raise ValueError(f"candidate {left!r} compared with itself")
        if winner is not None and winner not in (left, right):
            raise ValueError(f"winner {winner!r} was not in the comparison {left} / {right}")
        first, second = sorted((left, right), key=order.__getitem__)
        row = counts.setdefault((first, second), [0, 0, 0])
        row[2 if winner is None else 0 if winner == first else 1] += 1
    pairs = sorted(counts, key=lambda pair: (order[pair[0]], order[pair[1]]))
    return tuple(Tally(a, b, *counts[(a, b)]) for a, b in pairs)


def _table(
    tallies: Sequence[Tally], family: str, alpha: float, confidence_level: float
) -> PairTable:
    level = _check_confidence(confidence_level)
    alpha_value = _check_alpha(alpha)
    results = [
        preference_test(t.wins, t.losses, t.ties, alpha=alpha_value, confidence_level=level)
        for t in tallies
    ]
    adjusted = holm([r.p_value for r in results]) if results else ()
    records = tuple(
        PairRecord(
            first=t.first,
            second=t.second,
            wins=t.wins,
            losses=t.losses,
            ties=t.ties,
            n=r.n,
            win_rate=r.win_rate,
            p_value=r.p_value,
            p_holm=p,
            significant=p <= alpha_value and r.n > 0,
        )
        for t, r, p in zip(tallies, results, adjusted, strict=True)
    )
    return PairTable(records, family, alpha_value, level)


def pair_table(
    tallies: Sequence[Tally], *, alpha: float = 0.05, confidence_level: float = 0.95
) -> PairTable:
    """Per pair: wins, losses, ties, Wilson interval, exact p; Holm across every pair given
    (every pair that met at least once, ties-only pairs included with p = 1)."""
    return _table(tallies, "pairs", alpha, confidence_level)


def reference_table(
    tallies: Sequence[Tally],
    reference: str,
    *,
    alpha: float = 0.05,
    confidence_level: float = 0.95,
) -> PairTable:
    """Each candidate against ``reference``: its win rate over the reference (ties left out,
    counted), Wilson interval, exact p, Holm across the candidates. Pairs without the
    reference are ignored; a candidate that never met the reference is left out."""
    turned = []
    for t in tallies:
        if t.second == reference and t.first != reference:
            turned.append(t)
        elif t.first == reference and t.second != reference:
            turned.append(Tally(t.second, t.first, t.losses, t.wins, t.ties))
    if not turned:
        raise ValueError(f"no comparison against the reference {reference!r}")
    return _table(turned, f"against {reference}", alpha, confidence_level)
