"""bt-plan --decide: how many comparisons a pre-registered decision needs.

For preference rules (``noninferior:MARGIN``, ``superior``, ``equivalent:MARGIN``) the unit is
the comparison and the estimand the challenger's share of untied comparisons: of ``n``
comparisons a share ``ties`` are ties, and the claim is tested exactly, conditional on the
untied count (`blindtest.stats.sizing`). The table gives the exact power at each n with the
test's size at the rule's margin beside it, then the smallest n reaching the target power and
the stable n, from which every larger n does (exact power is a sawtooth in n). ``similar:PD0``
is the triangle and pair protocols' similarity claim, planned by bt-plan --similarity. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from blindtest.present.screen import wrap_lines
from blindtest.reportfmt import fixed
from blindtest.stats.decision import DecisionRule, parse_rule
from blindtest.stats.sizing import (
    DecisionPowerRow,
    PowerRule,
    SampleSize,
    decision_power_table,
    decision_sample_size,
)

__all__ = ["DecisionPlan", "decision_grid", "format_decision_plan", "plan_decision"]

#: Comparisons tabulated when the sample size search finds none to centre the table on.
FALLBACK_GRID = (100, 200, 500, 1_000, 2_000, 5_000)


@dataclass(frozen=True, slots=True)
class DecisionPlan:
    """The power of one decision rule by n, and the n that settles it."""

    rule: DecisionRule
    true: float
    ties: float
    alpha: float
    target_power: float
    rows: tuple[DecisionPowerRow, ...]
    sample_size: SampleSize

    def to_dict(self) -> dict[str, Any]:
        """What ``bt-plan --decide ... --json`` prints."""
        return {
            "decide": str(self.rule),
            "estimand": "untied-share",
            "unit": "comparison",
            "true": self.true,
            "ties": self.ties,
            "alpha": self.alpha,
            "target_power": self.target_power,
            "rows": [
                {
                    "n": row.n,
                    "expected_untied": row.expected_untied,
                    "power": row.power,
                    "size": row.size,
                }
                for row in self.rows
            ],
            "smallest_n": self.sample_size.smallest_n,
            "stable_n": self.sample_size.stable_n,
            "stable_sure": self.sample_size.stable_sure,
            "searched_to": self.sample_size.searched_to,
        }


def decision_grid(smallest: int | None) -> list[int]:
    """Round comparison counts around the smallest n (a quarter of it to twice it)."""
    if smallest is None:
        return list(FALLBACK_GRID)
    step = 10 if smallest < 1_000 else 100
    found = {max(step, round(smallest * f / step) * step) for f in (0.25, 0.5, 0.75, 1.5, 2)}
    return sorted(found | {smallest})


def plan_decision(
    rule: str | DecisionRule,
    *,
    true: float,
    ties: float = 0.0,
    power: float = 0.8,
    alpha: float = 0.05,
    trials: Sequence[int] | None = None,
) -> DecisionPlan:
    """The plan of a preference decision (ValueError for ``similar``: plan it with
    `blindtest.planning.rows.build_similarity_plan`)."""
    parsed = parse_rule(rule)
    if parsed.rule == "similar":
        raise ValueError("a similarity claim is planned as a similarity plan")
    margin = parsed.margin if parsed.rule != "superior" else None
    name = cast(PowerRule, parsed.rule)
    size = decision_sample_size(name, margin, true=true, ties=ties, power=power, alpha=alpha)
    ns = list(trials) if trials is not None else decision_grid(size.smallest_n)
    rows = decision_power_table(ns, name, margin, true=true, ties=ties, alpha=alpha)
    return DecisionPlan(parsed, true, ties, alpha, power, tuple(rows), size)


_CLAIMS = {
    "noninferior": "the challenger wins at least {lo:.0%} of the untied comparisons",
    "superior": "the challenger wins more than half of the untied comparisons",
    "equivalent": "the challenger's untied share lies between {lo:.0%} and {hi:.0%}",
}


_TESTS = {
    "noninferior": "one-sided exact binomial test",
    "superior": "one-sided exact binomial test",
    "equivalent": "two one-sided exact binomial tests",
}


def format_decision_plan(plan: DecisionPlan, width: int = 80) -> str:
    """The plan as bt-plan prints it: the claim, the planning values, the table, the n."""
    rule = plan.rule
    claim = _CLAIMS[rule.rule].format(lo=rule.lower or 0.0, hi=rule.upper or 0.0)
    lines = [
        f"decision {rule}: {claim}; {_TESTS[rule.rule]} at alpha {plan.alpha:g}, conditional "
        "on the untied count; the unit is the comparison",
        f"planning values: true untied share {plan.true:g}, ties {plan.ties:g} of the "
        f"comparisons, target power {plan.target_power:g}",
        "",
        f"  {'comparisons':>11}  {'untied (expected)':>17}  {'power':>6}  {'size at margin':>14}",
    ]
    for row in plan.rows:
        lines.append(
            f"  {row.n:>11,}  {row.expected_untied:>17,.1f}  {fixed(row.power, 3):>6}  "
            f"{fixed(row.size, 4):>14}"
        )
    lines.append("")
    lines.append(_settled(plan.sample_size, plan.target_power))
    return wrap_lines(lines, width)


def _settled(size: SampleSize, target: float) -> str:
    if size.smallest_n is None:
        return (
            f"no n up to {size.searched_to:,} comparisons reaches power {target:g} at these "
            "planning values: widen the margin, or plan for a larger true share"
        )
    said = (
        f"smallest n reaching power {target:g}: {size.smallest_n:,} comparisons "
        f"(power {fixed(size.power_at_smallest or 0.0, 3)})"
    )
    if size.stable_n is None:
        return f"{said}; no stable n found up to {size.stable_checked_to:,}"
    sure = "" if size.stable_sure else f" (checked up to {size.stable_checked_to:,})"
    return f"{said}; stable n: {size.stable_n:,}, from which every larger n reaches it{sure}"
