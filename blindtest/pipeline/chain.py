"""Where a run stands between stages, for the commands that chain them (``blindtest run``, the
demo): who has judged it and how far, the seed it was designed with, and whether a directory
holds a demo run the demo may resume. Reads the run directory; writes nothing.

It sits above the stages, like the verifier: it asks the judge stage how far a judge got.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from blindtest.errors import BadInput
from blindtest.rundir import artifacts


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
    from blindtest.judging.recorder import Recorder
    from blindtest.model.picks import load_judge_run, read_picks

    run = load_judge_run(run_dir)
    path = picks_path if picks_path is not None else run_dir / artifacts.PICKS
    picks = read_picks(path, run.view, missing_ok=True).answered  # "both bad" is a word too
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


def _is_own_temporary(name: str) -> bool:
    # Lock files and the temporary files of an atomic write cut short by a kill.
    return name.startswith(".") and name.endswith((".lock", ".tmp"))


def check_demo_dir(run_dir: Path) -> int:
    """Refuse a directory the demo must not touch; return the simulator port to use (the one
    the recorded design names, or 0 for a free one)."""
    if not run_dir.exists():
        return 0
    if not run_dir.is_dir():
        raise BadInput(f"{run_dir} is a file; the demo needs a directory of its own")
    names = sorted(p.name for p in run_dir.iterdir() if not _is_own_temporary(p.name))
    for name in names:
        expected = artifacts.RUN_FILE_KINDS.get(name)
        found = artifacts.artifact_kind(run_dir / name) if expected is not None else None
        if expected is None or found not in (expected, "", artifacts.TORN):
            raise BadInput(
                f"{run_dir} holds {name}, which is not part of a blindtest demo run; the demo "
                "never deletes or writes beside other files: give it another directory"
            )
    if not names:
        return 0
    if artifacts.DESIGN not in names:
        raise BadInput(f"{run_dir} holds {names[0]} but no {artifacts.DESIGN}; not a demo run")
    recorded = artifacts.load_design(run_dir).design
    if not recorded.get("demo"):
        raise BadInput(
            f"{run_dir} holds another design (not made by the demo); give the demo another "
            "directory"
        )
    # Side A's endpoint, or with candidates the first candidate's (the demos serve all on one).
    first = next(iter(recorded["models"].values()))
    url = urlsplit(str(first.get("base_url", "")))
    try:
        port = url.port
    except ValueError:
        port = None
    return port if url.hostname == "127.0.0.1" and port else 0
