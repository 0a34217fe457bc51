"""Planning: what a design can detect (critical count, achieved alpha, exact power), before
any model is called; on request the power curves as an HTML page."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from blindtest.errors import BadInput, message_of, option
from blindtest.model.protocols import DEFAULT_PROTOCOL
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

__all__ = ["Plan", "plan"]


@dataclass(frozen=True, slots=True)
class Plan:
    """The power table (``result``: its rows, one per trial count, and the smallest n for
    ``target_power``) and the HTML page written, if one was asked for."""

    result: PlanResult
    trials: tuple[int, ...]
    html_path: Path | None = None

    def text(self, width: int = 80) -> str:
        """The table as ``bt-plan`` prints it, at ``width`` columns."""
        return format_plan(self.result, width=width)


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
    protocol: str = DEFAULT_PROTOCOL,
    *,
    trials: Sequence[int] | None = None,
    pc: Sequence[str | float] | None = None,
    pd: Sequence[str | float] | None = None,
    alpha: float = 0.05,
    target_power: float | None = None,
    similarity_pd0: float | None = None,
    ties: float = 0.0,
    html: str | os.PathLike[str] | None = None,
) -> Plan:
    """The exact power table ``bt-plan`` prints: for each of ``trials`` (default 10 to 50),
    the critical count, the achieved alpha and the power at each alternative, given as
    proportions correct ``pc`` (win rates for preference) or proportions of discriminators
    ``pd``. ``similarity_pd0`` plans a similarity claim (pd < PD0) instead; ``ties`` is a
    preference plan's expected tie rate. ``html``: also write the power curves there.
    Calls no model and reads no run."""
    if pc is not None and pd is not None:
        raise BadInput(f"give {option('pc')} or {option('pd')}, not both")
    if not 0 < alpha <= 0.5:
        raise BadInput(f"{option('alpha')} must be in (0, 0.5], got {alpha}")
    counts = check_trials(list(trials) if trials is not None else list(DEFAULT_TRIALS))
    pcs, pds = _texts(pc, "pc"), _texts(pd, "pd")
    try:
        if similarity_pd0 is not None:
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
                raise BadInput(
                    f"{option('similarity_pd0')} must be in (0, 1), got {similarity_pd0}"
                )
            result = build_similarity_plan(
                protocol, counts, similarity_pd0, alpha=alpha, pds=pds, target_power=target_power
            )
        else:
            result = build_plan(
                protocol,
                counts,
                alpha=alpha,
                pcs=pcs,
                pds=pds,
                target_power=target_power,
                ties=ties,
            )
    except ValueError as error:
        raise BadInput(message_of(error)) from None
    page = Path(html) if html is not None else None
    if page is not None:
        if similarity_pd0 is not None:
            raise BadInput(
                f"{option('html')} draws difference power curves; drop "
                f"{option('similarity_pd0')} or {option('html')}"
            )
        _write_page(page, result, counts, pcs, pds, alpha, target_power)
    return Plan(result, tuple(counts), page)


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
