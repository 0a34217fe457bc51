"""Where a run stands between stages, for the commands that chain them (``blindtest run``, the
demo): who has judged it and how far. Reads the run directory; writes nothing.

It sits above the stages, like the verifier: it asks the judge stage how far a judge got.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from blindtest import artifacts


@dataclass(frozen=True, slots=True)
class Judging:
    """How far one judge is in a run: ``done`` once every trial is judged, or once a
    sequential design's stopping rule ended the session (that run is finished too)."""

    judge: str
    judged: int
    total: int
    done: bool


def judging_state(run_dir: Path, judge_name: str, picks_path: Path | None = None) -> Judging:
    """Read the picks file (default RUN/picks.jsonl) and say where ``judge_name`` stands."""
    from blindtest.judge import Recorder, load_judge_run, read_picks

    run = load_judge_run(run_dir)
    path = picks_path if picks_path is not None else run_dir / artifacts.PICKS
    picks = read_picks(path, run.view, missing_ok=True).picks
    last = {}  # a judge's last word on each trial (an undo appends a correction)
    for pick in picks:
        if pick.judge == judge_name:
            last[pick.trial] = pick
    recorder = Recorder(run, judge_name, lambda _: None, earlier=list(last.values()))
    return Judging(judge_name, recorder.judged, run.view.total, recorder.done)


def picks_judges(run_dir: Path) -> list[str]:
    """The judges already in RUN/picks.jsonl, in order of first appearance."""
    path = run_dir / artifacts.PICKS
    if not path.exists():
        return []
    records = artifacts.read_jsonl(path, "picks").records
    return list(dict.fromkeys(str(r.get("judge", "")) for r in records))


def recorded_seed(run_dir: Path) -> str | None:
    """The seed of the design already in RUN (a resumed run reuses it), else None."""
    if not (run_dir / artifacts.DESIGN).exists():
        return None
    return str(artifacts.load_design(run_dir).design["seed"])
