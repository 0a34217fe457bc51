"""`blindtest run` with several candidates: no A B, the candidates from --candidate or --sides,
every stage in order ending in the ranking, prices per candidate, the same command resuming
without a request, and A B beside candidates (or neither given) refused in one line."""

from __future__ import annotations

from pathlib import Path

import orjson

from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke, files_in

SIDES_TOML = """\
[large]
model = "sim-large"

[small]
model = "sim-small"

[large-brief]
model = "sim-large"
system = "Be brief."
"""


def run_args(simulator: Simulator, run: Path, sides: Path, *extra: object) -> list[object]:
    return [
        "run", "--demo", "--sides", sides, "--url", simulator.base_url, "--seed", "chain-k",
        "--trials", 9, "--judge", "bot:length", "--run-dir", run, *extra,
    ]  # fmt: skip


def test_a_candidates_run_goes_from_design_to_ranking_and_resumes_without_a_request(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    sides = tmp_path / "sides.toml"
    sides.write_text(SIDES_TOML, encoding="utf-8")
    run = tmp_path / "run"
    args = run_args(simulator, run, sides, "--price", "large=3,12", "--price", "small=0.2,0.8")
    first = invoke(*args)
    assert first.exit_code == 0, first.stderr
    design = orjson.loads((run / artifacts.DESIGN).read_bytes())
    assert design["candidates"] == ["large", "small", "large-brief"]
    assert design["trials"] == 9
    # Each candidate answers each prompt it meets once: 3 pairs met 3 times over 3 prompts.
    answers = {
        (e["prompt_id"], side) for e in design["arrangement"] for side in (e["left"], e["right"])
    }
    assert len(simulator.requests) == len(answers)
    report = orjson.loads((run / artifacts.REPORT).read_bytes())
    named = [record["candidate"] for record in report["candidates"]["ranking"]]
    assert sorted(named) == ["large", "large-brief", "small"]
    assert "Ranking" in first.stdout or "ranking" in first.stdout
    before = files_in(run)
    requests = len(simulator.requests)
    again = invoke(*args)
    assert again.exit_code == 0, again.stderr
    assert len(simulator.requests) == requests  # nothing asked twice
    assert set(files_in(run)) == set(before)


def test_models_beside_candidates_or_no_models_at_all_are_refused_in_one_line(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    sides = tmp_path / "sides.toml"
    sides.write_text(SIDES_TOML, encoding="utf-8")
    run = tmp_path / "run"
    both = invoke("run", "sim-large", *run_args(simulator, run, sides)[1:])
    assert both.exit_code == 2
    assert "names its models with --candidate or --sides, not as A B" in both.stderr
    neither = invoke("run", "--demo", "--run-dir", run)
    assert neither.exit_code == 2
    assert "give the two models, A B" in neither.stderr
    assert len(neither.stderr.strip().splitlines()) == 1
    assert not run.exists()
