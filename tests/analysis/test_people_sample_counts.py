"""A people's-sample run counts what people were asked against the sample, never against the
design's every comparison (which the LLM judge judges): the void line, and the header when
people left some of their sample unjudged under the bound rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from blindtest.model.people_sample import people_trials
from blindtest.model.picks import load_judge_run
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke
from judge_runs import write_picks
from llm_runs import llm


def _sampled_run(invoke: Invoke, tmp_path: Path, url: str, *design: Any) -> Path:
    """24 comparisons, people asked 10 of them (one per sampled prompt)."""
    source = tmp_path / "prompts.txt"
    source.write_text("".join(f"Question {i}: say something about {i}.\n" for i in range(24)))
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--prompts", source, "--protocol", "preference", "--trials", 24,
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "ppi",
        "--people-sample", 10, *design,
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    return run


def _person_leaving_out(run: Path, left_out: int) -> None:
    """ann judges her sample but its last ``left_out`` comparisons: A when she can."""
    loaded = load_judge_run(run)
    asked = list(people_trials(loaded.design) or ())
    left = {e["trial"]: e["left"] for e in loaded.design["arrangement"]}
    rows = [
        {"trial": trial, "judge": "ann", "pick": "left" if left[trial] == "A" else "right",
         "judge_kind": "human", "design_sha256": loaded.design_sha256}
        for trial in asked[: len(asked) - left_out]
    ]  # fmt: skip
    write_picks(run / artifacts.PICKS, rows)


def _with_judge(invoke: Invoke, run: Path, url: str) -> None:
    judged = llm(invoke, run, "sim-judge-fair", "--out", run / "picks-judge.jsonl", url=url)
    assert judged.exit_code == 0, judged.output


def test_an_unfinished_peoples_sample_says_how_many_of_the_sample_were_judged(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _sampled_run(invoke, tmp_path, simulator.base_url)
    _person_leaving_out(run, 1)
    _with_judge(invoke, run, simulator.base_url)
    analysed = invoke("analyze", run)
    assert analysed.exit_code == 1
    # Was "void: 9 of 24 judged": the design's comparisons, of which people were asked 10.
    assert "\nvoid: 9 of the people's sample of 10 judged; finish with:\n" in analysed.stderr
    report = json.loads((run / artifacts.REPORT).read_text())
    assert (report["trials_planned"], report["people_trials_planned"]) == (24, 10)
    verified = invoke("verify", run)
    assert verified.exit_code == 0, verified.output


def test_the_header_says_how_many_of_their_sample_people_judged_when_some_are_bounded(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = _sampled_run(invoke, tmp_path, simulator.base_url, "--people-missing", "bound")
    _person_leaving_out(run, 2)
    _with_judge(invoke, run, simulator.base_url)
    screen = " ".join(invoke("analyze", run).stdout.split())
    # Was "24 comparisons (people judged 10, the judge all)": 10 is what they were asked.
    assert "24 comparisons (people judged 8 of their sample's 10, the judge all)" in screen
