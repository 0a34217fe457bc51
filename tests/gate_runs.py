"""Run directories for the release-gate tests: a design with a pre-registered decision (two
sides, or candidates against a reference), answers that read as prose (so every degradation
applies), the blinded view built as bt-generate builds it (planted copies included), and
picks constructed to give each challenger a chosen number of wins and losses, and the judge a
chosen score on the planted comparisons, with left and right chosen about equally often."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from blindtest.designing.build import DesignOptions, ModelSpec, build_design
from blindtest.designing.decision import DecisionSpec
from blindtest.generation.summary import generation_record
from blindtest.model.candidates import comparison_sides
from blindtest.model.slots import SlotState, build_trials_view, plan_slots
from blindtest.rundir import artifacts

from report_runs import PROVENANCE, numbered_prompts, response_row, write_picks

SEED = "gate-tests"
PRICES = {"A": (2.5, 10.0), "B": (0.15, 0.6), "big": (2.5, 10.0)}


def answer(trial: int, slot: int, side: str) -> str:
    """Five sentences of prose, distinct per slot."""
    return " ".join(
        f"Point {n} of answer {trial}-{slot} from {side} says something useful." for n in range(5)
    )


def decision(
    rule: str = "noninferior:0.05",
    *,
    champion: str = "A",
    sensitivity: int = 0,
    estimand: str = "untied-share",
    sequential: bool = False,
) -> DecisionSpec:
    name, _, margin = rule.partition(":")
    return DecisionSpec(
        rule=name,
        margin=float(margin or 0),
        estimand=estimand,
        champion=champion,
        plan_true=0.6 if name == "superior" else 0.5,
        plan_ties=0.0,
        sensitivity=sensitivity,
        sequential=sequential,
    )


def gate_run(
    root: Path,
    *,
    trials: int = 100,
    spec: DecisionSpec | None = None,
    candidates: Sequence[str] = (),
    name: str = "run",
    tags: Mapping[int, Sequence[str]] | None = None,
) -> Path:
    """A whole run (design, responses, trials, generation) ready to be judged: two sides, or
    ``candidates`` with the first as the reference (``trials`` is then the prompts)."""
    prompts = numbered_prompts(
        trials + (spec.sensitivity if spec else 0),
        tags=(lambda i: (tags or {}).get(i, ())) if tags else None,
    )
    options = DesignOptions(
        a=ModelSpec("model-a", label="big"),
        b=ModelSpec("model-b", label="cheap"),
        seed=SEED,
        protocol="preference",
        trials=trials if not candidates else trials * (len(candidates) - 1),
        decision=spec,
        candidates=tuple((c, ModelSpec(f"model-{c}")) for c in candidates),
        pairs=f"reference:{candidates[0]}" if candidates else "all",
    )
    design = build_design(prompts, options, PROVENANCE)
    run = root / name
    run.mkdir(parents=True)
    digest = artifacts.write_design(run, dict(design))
    rows = [response_row(design, s, answer(s.trial, s.slot, s.side)) for s in plan_slots(design)]
    artifacts.write_jsonl(run / artifacts.RESPONSES, rows, "responses", force=False)
    view = build_trials_view(design, SlotState.from_rows(rows))
    artifacts.write_jsonl(run / artifacts.TRIALS, view, "trials", force=False)
    record = generation_record(design, digest, rows, dict(PRICES), 1.0)
    artifacts.write_json(run / artifacts.GENERATION, record, "generation")
    return run


def _pick(entry: Mapping[str, Any], winner: str | None) -> str:
    if winner is None:
        return "tie"
    left, _ = comparison_sides(entry)
    return "left" if winner == left else "right"


def outcome_picks(
    design: Mapping[str, Any],
    wins: Mapping[str, int],
    losses: Mapping[str, int],
    *,
    planted_wins: int = 0,
    planted_losses: int = 0,
    judge: str = "alice",
    champion: str = "A",
) -> list[dict[str, Any]]:
    """Picks giving each challenger ``wins[c]`` wins and ``losses[c]`` losses against the
    champion (the rest ties), each side's wins dealt alternately to the comparisons where it
    is shown left and right; on the planted comparisons the original wins ``planted_wins``
    and loses ``planted_losses`` (the rest ties)."""
    records = []
    real = [e for e in design["arrangement"] if "planted" not in e and "control" not in e]
    by_challenger: dict[str, list[Mapping[str, Any]]] = {}
    for entry in real:
        sides = comparison_sides(entry)
        other = next(s for s in sides if s != champion)
        by_challenger.setdefault(other, []).append(entry)
    for challenger, entries in by_challenger.items():
        queues = [
            [e for e in entries if comparison_sides(e)[0] == champion],
            [e for e in entries if comparison_sides(e)[0] != champion],
        ]
        winners: dict[int, str | None] = {int(e["trial"]): None for e in entries}
        turn = 0
        for side, count in ((challenger, wins.get(challenger, 0)),
                            (champion, losses.get(challenger, 0))):  # fmt: skip
            for _ in range(count):
                queue = queues[turn % 2] or queues[(turn + 1) % 2]
                winners[int(queue.pop(0)["trial"])] = side
                turn += 1
        for entry in entries:
            pick = _pick(entry, winners[int(entry["trial"])])
            records.append({"trial": entry["trial"], "judge": judge, "pick": pick})
    planted = [e for e in design["arrangement"] if "planted" in e]
    for index, entry in enumerate(planted):
        original = int(entry["planted"]["original"])
        if index < planted_wins:
            pick = "left" if original == 1 else "right"
        elif index < planted_wins + planted_losses:
            pick = "right" if original == 1 else "left"
        else:
            pick = "tie"
        records.append({"trial": entry["trial"], "judge": judge, "pick": pick})
    return sorted(records, key=lambda r: int(r["trial"]))


def judge(run: Path, records: Sequence[Mapping[str, Any]], name: str = "picks.jsonl") -> Path:
    """Write the picks, each with a reason, against the run's design."""
    sha = artifacts.read_design_hash(run)
    lines = [
        {**r, "reason": f"chose {r['pick']}", "design_sha256": sha, "judge_kind": "human"}
        for r in records
    ]
    return write_picks(run / name, lines)


def design_of(run: Path) -> dict[str, Any]:
    return dict(artifacts.load_design(run).design)
