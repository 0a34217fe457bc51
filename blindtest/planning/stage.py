"""Planning: what a design can detect (critical count, achieved alpha, exact power), before
any model is called; on request the power curves as an HTML page."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blindtest.errors import BadInput, message_of, option
from blindtest.model.protocols import DEFAULT_PROTOCOL, PROTOCOLS
from blindtest.planning.rows import (
    DEFAULT_TRIALS,
    MAX_TOTAL_TRIALS,
    PlanResult,
    build_plan,
    build_similarity_plan,
    format_plan,
)
from blindtest.planning.search import MAX_TRIALS
from blindtest.rundir import artifacts

if TYPE_CHECKING:
    # Loaded where a decision or a people's sample is planned: the decision statistics bring
    # scipy.optimize (the mean score's interval), which the default table never needs.
    from blindtest.planning.decision import DecisionPlan
    from blindtest.planning.people import PeoplePlan

__all__ = ["Plan", "plan"]

#: The protocol a preference decision is planned for.
_PREFERENCE = next(name for name, p in PROTOCOLS.items() if p.prefers)


@dataclass(frozen=True, slots=True)
class Plan:
    """The power table (``result``: its rows, one per trial count, and the smallest n for
    ``target_power``) and the HTML page written, if one was asked for; for a preference
    decision (``decide``), ``decision`` instead: the power by n and the n that settles it."""

    result: PlanResult | None
    trials: tuple[int, ...]
    html_path: Path | None = None
    decision: DecisionPlan | None = None
    #: A people's sample beside an LLM judge (``people_sample``): its plan, instead.
    people: PeoplePlan | None = None

    def text(self, width: int = 80) -> str:
        """The table as ``bt-plan`` prints it, at ``width`` columns."""
        if self.people is not None:
            return self.people.text(width)
        if self.decision is not None:
            from blindtest.planning.decision import format_decision_plan

            return format_decision_plan(self.decision, width=width)
        assert self.result is not None
        return format_plan(self.result, width=width)

    def rows(self) -> list[Any]:
        """What ``--json`` prints."""
        if self.people is not None:
            return self.people.to_rows()
        if self.decision is not None:
            return [self.decision.to_dict()]
        assert self.result is not None
        return list(self.result.rows)


def _texts(values: Sequence[str | float] | None, name: str) -> list[str] | None:
    if values is None:
        return None
    texts = [str(v).strip() for v in values if str(v).strip()]
    if not texts:
        raise BadInput(f"{option(name)}: give a comma-separated list, e.g. 0.6,0.7")
    return texts


def check_trials(trials: Sequence[int]) -> list[int]:
    """The trial counts to tabulate: each a whole number from 1 to ``MAX_TRIALS``, at most
    ``MAX_TOTAL_TRIALS`` in all."""
    values = []
    for n in trials:
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise BadInput(f"{option('trials')}: {n!r} is not a whole number of trials >= 1")
        if n > MAX_TRIALS:
            raise BadInput(
                f"{option('trials')}: {n:,} is more than bt-plan computes; trials go up to "
                f"{MAX_TRIALS:,} (each row is exact, its cost grows with n)"
            )
        values.append(n)
    if sum(values) > MAX_TOTAL_TRIALS:
        raise BadInput(
            f"{option('trials')}: the counts add up to {sum(values):,}; one table computes at "
            "most "
            f"{MAX_TOTAL_TRIALS:,} trials in all (each up to {MAX_TRIALS:,})"
        )
    return values


def plan(
    protocol: str | None = None,
    *,
    trials: Sequence[int] | None = None,
    pc: Sequence[str | float] | None = None,
    pd: Sequence[str | float] | None = None,
    alpha: float = 0.05,
    target_power: float | None = None,
    similarity_pd0: float | None = None,
    ties: float = 0.0,
    html: str | os.PathLike[str] | None = None,
    decide: str | None = None,
    true: float | None = None,
    people_sample: int | None = None,
    agreement: float | None = None,
    judge_ties: float | None = None,
    margin: float | None = None,
    width: float | None = None,
) -> Plan:
    """The exact power table ``bt-plan`` prints: for each of ``trials`` (default 10 to 50),
    the critical count, the achieved alpha and the power at each alternative, given as
    proportions correct ``pc`` (win rates for preference) or proportions of discriminators
    ``pd``. ``similarity_pd0`` plans a similarity claim (pd < PD0) instead; ``ties`` is a
    preference plan's expected tie rate. ``html``: also write the power curves there.
    ``decide``: a pre-registered decision rule (``noninferior:0.05``, ``superior``,
    ``equivalent:0.1``; ``similar:PD0`` is ``similarity_pd0``) planned at the challenger's true
    untied share ``true`` (default 1/2) and ``ties``, to ``target_power`` (default 0.8).
    ``protocol`` defaults to the triangle, or to preference for a preference ``decide``.
    ``people_sample``: the people's sample among that many comparisons an LLM judge judges,
    from ``agreement`` (`blindtest.planning.people`), at the sample sizes ``trials``, with a
    ``target_power`` at ``margin`` or a ``width``. Calls no model and reads no run."""
    if people_sample is not None:
        from blindtest.planning.people import plan_people

        if decide is not None or pc is not None or pd is not None or html is not None:
            raise BadInput(
                f"{option('people_sample')} plans the people's sample alone: drop "
                f"{option('decide')}, {option('pc')}, {option('pd')} and {option('html')}"
            )
        found = plan_people(
            people_sample, agreement=agreement, ties=ties, judge_ties=judge_ties, true=true,
            margin=margin, power=target_power, width=width, sizes=trials, alpha=alpha,
        )  # fmt: skip
        return Plan(None, tuple(row.n for row in found.rows), people=found)
    protocol, decided = _decided(
        protocol, decide, trials, pc, pd, alpha, target_power, ties, html, true
    )
    if decided is not None:
        return decided
    if decide is not None:  # similar:PD0, the similarity plan
        similarity_pd0 = float(decide.partition(":")[2])
    if pc is not None and pd is not None:
        raise BadInput(f"give {option('pc')} or {option('pd')}, not both")
    if not 0 < alpha <= 0.5:
        raise BadInput(f"{option('alpha')} must be in (0, 0.5], got {alpha}")
    counts = check_trials(list(trials) if trials is not None else list(DEFAULT_TRIALS))
    pcs, pds = _texts(pc, "pc"), _texts(pd, "pd")
    result = _table(protocol, counts, alpha, pcs, pds, target_power, similarity_pd0, ties)
    page = Path(html) if html is not None else None
    if page is not None:
        if similarity_pd0 is not None:
            raise BadInput(
                f"{option('html')} draws difference power curves; drop "
                f"{option('similarity_pd0')} or {option('html')}"
            )
        _write_page(page, result, counts, pcs, pds, alpha, target_power)
    return Plan(result, tuple(counts), page)


def _table(
    protocol: str,
    counts: list[int],
    alpha: float,
    pcs: list[str] | None,
    pds: list[str] | None,
    target_power: float | None,
    similarity_pd0: float | None,
    ties: float,
) -> PlanResult:
    """The difference plan, or the similarity plan at ``similarity_pd0``."""
    try:
        if similarity_pd0 is None:
            return build_plan(
                protocol, counts, alpha=alpha, pcs=pcs, pds=pds, target_power=target_power,
                ties=ties,
            )  # fmt: skip
        if pcs is not None:
            raise BadInput(
                f"with {option('similarity_pd0')}, give the true pd grid with {option('pd')}"
            )
        if ties:
            raise BadInput(
                f"{option('ties')} is for preference difference plans; drop "
                f"{option('similarity_pd0')}"
            )
        if not 0 < similarity_pd0 < 1:
            raise BadInput(f"{option('similarity_pd0')} must be in (0, 1), got {similarity_pd0}")
        return build_similarity_plan(
            protocol, counts, similarity_pd0, alpha=alpha, pds=pds, target_power=target_power
        )
    except ValueError as error:
        raise BadInput(message_of(error)) from None


def _decided(
    protocol: str | None,
    decide: str | None,
    trials: Sequence[int] | None,
    pc: Sequence[str | float] | None,
    pd: Sequence[str | float] | None,
    alpha: float,
    target_power: float | None,
    ties: float,
    html: str | os.PathLike[str] | None,
    true: float | None,
) -> tuple[str, Plan | None]:
    """The protocol planned for, and a preference decision's plan (None otherwise)."""
    similar = decide is None or decide.partition(":")[0] == "similar"
    if protocol is None:
        protocol = DEFAULT_PROTOCOL if similar else _PREFERENCE
    if decide is None:
        return protocol, None
    return protocol, _plan_decision(
        protocol, decide, trials, pc, pd, alpha, target_power, ties, html, true
    )


def _plan_decision(
    protocol: str,
    decide: str,
    trials: Sequence[int] | None,
    pc: Sequence[str | float] | None,
    pd: Sequence[str | float] | None,
    alpha: float,
    target_power: float | None,
    ties: float,
    html: str | os.PathLike[str] | None,
    true: float | None,
) -> Plan | None:
    """A preference decision's plan; None for ``similar:PD0`` (a similarity plan)."""
    if decide.partition(":")[0] == "similar":
        if not PROTOCOLS[protocol].similarity:
            raise BadInput(
                "similar:PD0 is the triangle and pair protocols' claim; for "
                "preference decide noninferior:MARGIN or equivalent:MARGIN"
            )
        return None
    if not PROTOCOLS[protocol].prefers:
        raise BadInput(
            f"{option('decide', decide)} is a preference decision; use "
            f"{option('protocol', 'preference')} "
            "(or similar:PD0 for the triangle and pair protocols)"
        )
    if pc is not None or pd is not None or html is not None:
        raise BadInput(
            f"{option('decide')} plans at one true share: give it with {option('true')}, not "
            f"{option('pc')}, {option('pd')} or {option('html')}"
        )
    if not 0 < alpha <= 0.5:
        raise BadInput(f"{option('alpha')} must be in (0, 0.5], got {alpha}")
    from blindtest.planning.decision import plan_decision

    counts = check_trials(list(trials)) if trials is not None else None
    try:
        decision = plan_decision(
            decide,
            true=0.5 if true is None else true,
            ties=ties,
            power=0.8 if target_power is None else target_power,
            alpha=alpha,
            trials=counts,
        )
    except ValueError as error:
        raise BadInput(f"{option('decide')}: {message_of(error)}") from None
    return Plan(None, tuple(row.n for row in decision.rows), None, decision)


def _write_page(
    path: Path,
    result: PlanResult,
    trials: list[int],
    pcs: list[str] | None,
    pds: list[str] | None,
    alpha: float,
    target: float | None,
) -> None:
    """The power curves from the smallest to the largest trial count, every n (at most 400)."""
    from blindtest.present.page import render_plan_page

    artifacts.claim_output(path, artifacts.HTML, force=True)
    lo, hi = min(trials), max(trials)
    step = max(1, (hi - lo) // 400 + 1)
    ns = sorted({*range(lo, hi + 1, step), hi})
    dense = build_plan(result.protocol, ns, alpha=alpha, pcs=pcs, pds=pds, ties=result.ties)
    curves = [
        (f"{dense.grid} {v.text}", [row["power"][v.text] for row in dense.rows])
        for v in dense.values
    ]
    page = render_plan_page(
        result.protocol, alpha, dense.grid, ns, curves, format_plan(result, width=100), target
    )
    artifacts.write_bytes_atomic(path, page.encode())
