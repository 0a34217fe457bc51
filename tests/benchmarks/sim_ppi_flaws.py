"""What a judge's flaw costs the prediction-powered interval, as `blindtest.stats.ppi_flaws`
estimates it, against what it truly costs, by seeded, vectorised simulation of the library's
own arithmetic (`adjust_for_variable`, `width_costs`).

    .venv/bin/python tests/benchmarks/sim_ppi_flaws.py               # the full grid (a minute)
    .venv/bin/python tests/benchmarks/sim_ppi_flaws.py --reps 500    # a quicker look

It prints a markdown table (pasted into docs/statistics.md). Not part of ``make bench``.

**The model** (a lean that shifts a judge's close calls, as a threshold model of verdicts).
Each comparison has a content difference ``d ~ N(0.2, 1)`` between its first and second
candidate. People see ``d + N(0, 0.5)`` (plus ``people_follow * s`` when they too follow the
variable) and say win above 0.3, loss below -0.3, a tie between. The judge sees ``d + N(0,
noise) + lean * s`` with the same thresholds, ``s`` the flaw's variable: position, ``+-1`` at
random (which side the first candidate was shown on); length, the sign of ``N(0.5, 1)`` (the
first candidate tends to write more). People judge the first ``n`` comparisons (exchangeable,
so a uniform sample), the judge all ``total``.

**The truth.** The same data set's judge with ``lean = 0`` (its own noise draw kept) is the
judge without the flaw: ``true cost`` is the actual interval's width minus that judge's (the
same estimator, weight and quantile), which only a simulation can know. ``estimated cost`` is
the library's, from the data alone. A cost is floored at 0 per data set, as the report says it.
Columns: mean width of the prediction-powered normal interval, mean estimated and true cost
(points of the score) and in people's judgements, the share of the judge's score variance the
variable explains, and the share of data sets whose estimated cost is 0.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from blindtest.stats import ppi_flaws

F64 = npt.NDArray[np.float64]
SEED = 20261206
THRESHOLD = 0.3
PEOPLE_NOISE = 0.5


def _verdict(v: F64) -> F64:
    return np.where(v > THRESHOLD, 1.0, np.where(v < -THRESHOLD, 0.0, 0.5))


def draw(
    rng: np.random.Generator,
    reps: int,
    total: int,
    *,
    noise: float,
    kind: str,
    lean: float,
    people_follow: float = 0.0,
) -> tuple[F64, F64, F64, F64]:
    """People's scores, the judge's with its lean, the judge's without it (the same noise),
    and the flaw's variable, each ``reps`` x ``total``."""
    d = rng.normal(0.2, 1.0, (reps, total))
    if kind == "position":
        s = rng.choice([-1.0, 1.0], (reps, total))
    else:
        s = np.sign(rng.normal(0.5, 1.0, (reps, total)))
    y = _verdict(d + rng.normal(0.0, PEOPLE_NOISE, (reps, total)) + people_follow * s)
    seen = d + rng.normal(0.0, noise, (reps, total))
    return y, _verdict(seen + lean * s), _verdict(seen), s


@dataclass(frozen=True)
class Cell:
    width: float
    cost: float
    true_cost: float
    people: float
    true_people: float
    explained: float
    zero_share: float


def run_cell(
    rng: np.random.Generator,
    reps: int,
    *,
    total: int,
    n: int,
    kind: str,
    lean: float,
    noise: float = 0.5,
    people_follow: float = 0.0,
) -> Cell:
    """One cell of the grid: the means over ``reps`` data sets (module doc)."""
    y, f, fair, s = draw(rng, reps, total, noise=noise, kind=kind, lean=lean,
                         people_follow=people_follow)  # fmt: skip
    ys, fs, fus, xs, xus = [y[:, :n]], [f[:, :n]], [f[:, n:]], [s[:, :n]], [s[:, n:]]
    adjusted = ppi_flaws.adjust_for_variable(ys, fs, fus, xs, xus)
    est = ppi_flaws.width_costs(ys, fs, fus, adjusted.fs, adjusted.fus, [1.0])
    true = ppi_flaws.width_costs(ys, fs, fus, [fair[:, :n]], [fair[:, n:]], [1.0])

    def floored(a: F64) -> F64:
        return np.maximum(np.nan_to_num(a, nan=0.0), 0.0)

    cost = floored(2 * (est.half_width - est.adjusted_half_width))
    true_cost = floored(2 * (true.half_width - true.adjusted_half_width))
    people = floored(est.adjusted_effective_n - est.effective_n)
    true_people = floored(true.adjusted_effective_n - true.effective_n)
    return Cell(
        width=float(np.nanmean(2 * est.half_width)),
        cost=float(cost.mean()),
        true_cost=float(true_cost.mean()),
        people=float(people.mean()),
        true_people=float(true_people.mean()),
        explained=float(adjusted.explained.mean()),
        zero_share=float(np.mean(cost == 0.0)),
    )


GRID = (
    ("position", 0.0),
    ("position", 0.25),
    ("position", 0.5),
    ("position", 1.0),
    ("position", 3.0),
    ("length", 0.0),
    ("length", 0.25),
    ("length", 0.5),
    ("length", 1.0),
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=4000)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(SEED)
    print(
        "| flaw | lean | people follow | comparisons | people | width | estimated cost | "
        "true cost | est. people | true people | explained | cost 0 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = [(kind, lean, 0.0) for kind, lean in GRID] + [("length", 0.5, 0.25),
                                                         ("length", 0.5, 0.5)]  # fmt: skip
    for kind, lean, follow in rows:
        for total in (200, 1000):
            for n in (20, 50, 100):
                c = run_cell(rng, args.reps, total=total, n=n, kind=kind, lean=lean,
                             people_follow=follow)  # fmt: skip
                print(
                    f"| {kind} | {lean:g} | {follow:g} | {total} | {n} | {c.width:.3f} | "
                    f"{c.cost:.4f} | {c.true_cost:.4f} | {c.people:.1f} | {c.true_people:.1f} | "
                    f"{c.explained:.2f} | {c.zero_share:.2f} |"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
