"""``blindtest run A B`` and ``python -m blindtest.cli.demo``: every stage in order against the
local simulator, each stage's files left in the run directory, and a report that verifies."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke, files_in
from screen_text import flat, paragraphs

EVERY_ARTIFACT = [
    "audit.json",
    "design.json",
    "design.sha256",
    "generation.json",
    "picks.jsonl",
    "report.json",
    "responses.jsonl",
    "trials.jsonl",
]


def report_of(run: Path) -> dict[str, Any]:
    return artifacts.read_json(run / artifacts.REPORT, "report")


def test_run_demo_produces_every_artifact_and_a_report_that_verifies(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    url = simulator.base_url
    result = invoke(
        "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
        "--judge", "bot:length", "--run-dir", run, "--seed", "run-test",
        "--price-a", "2.5,10", "--price-b", "0.15,0.6",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert files_in(run) == EVERY_ARTIFACT
    report = report_of(run)
    assert report["judges"] == ["bot:length"]
    assert report["protocol"] == "triangle"
    assert report["n"] == 20
    assert report["missing"] == []
    design = orjson.loads((run / artifacts.DESIGN).read_bytes())
    assert design["demo"] is True
    assert design["models"]["A"]["model"] == "sim-large"
    # The result screen: the score, the bots beside it, the channels and the demo reminder.
    screen = flat(result.stdout)  # the screen's words, unwrapped
    assert "of 20 correct" in screen
    assert "What a bot can explain (mechanical judges that read no content" in screen
    assert "content; wording and style; formatting; length" in screen
    assert any(s.startswith("Demo run") for s in paragraphs(result.stdout))
    assert "says nothing about your" in screen
    assert report["cost"] is not None
    assert report["cost"] in screen
    # sim-large writes long, headed, bulleted answers: length gives it away.
    assert "largely explained by length" in screen
    verified = invoke("verify", run)
    assert verified.exit_code == 0, verified.stdout
    assert paragraphs(verified.stdout)[-1] == "verified: everything recomputes"


def test_run_launders_and_the_report_shouts_it(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    url = simulator.base_url
    result = invoke(
        "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
        "--launder", "sim-launder", "--launder-url", url, "--trials", 6,
        "--judge", "bot:length", "--run-dir", run, "--seed", "launder-test",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "LAUNDERED RUN: a third model (sim-launder) rewrote every response." in result.stdout
    assert report_of(run)["channels_open"] == ["content as rewritten by the laundering model"]
    assert invoke("verify", run).exit_code == 0


def test_run_at_temperature_zero_in_pair_mode_tells_the_temperature_zero_story(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    url = simulator.base_url
    result = invoke(
        "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
        "--protocol", "pair", "--temperature", 0, "--trials", 8,
        "--judge", "bot:length", "--run-dir", run, "--seed", "pair-test",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "Generated at temperature 0" in result.stdout
    report = report_of(run)
    assert report["protocol"] == "pair"
    assert report["nicknames"] == ["longer", "shorter"]
    assert invoke("verify", run).exit_code == 0


def test_run_refuses_the_triangle_at_temperature_zero_before_calling_a_model(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    url = simulator.base_url
    result = invoke(
        "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
        "--temperature", 0, "--judge", "bot:length", "--run-dir", run,
    )  # fmt: skip
    assert result.exit_code == 2
    assert "refused at temperature 0" in result.stderr
    assert files_in(run) == []
    assert simulator.requests == []


def test_demo_without_a_terminal_uses_the_length_bot_and_says_so(tmp_path: Path) -> None:
    run = tmp_path / "demo-run"
    env = {k: v for k, v in os.environ.items() if k != "BLINDTEST_DEBUG"}
    done = subprocess.run(
        [sys.executable, "-m", "blindtest.cli.demo", str(run)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "stdin is not a terminal, so the length bot judges this demo "
        "(run `make demo` in a terminal to judge it yourself)." in done.stderr
    )
    assert "bt-verify: every file in" in done.stderr
    assert files_in(run) == EVERY_ARTIFACT
    picks = artifacts.read_jsonl(run / artifacts.PICKS, "picks").records
    assert {p["judge"] for p in picks} == {"bot:length"}
    assert len(picks) == 20
    assert "Demo run" in flat(done.stdout)
    assert "judged by: bot:length" in flat(done.stdout)


def test_run_with_a_misspelt_judge_lists_every_kind_and_writes_nothing(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    url = simulator.base_url
    result = invoke(
        "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
        "--judge", "lm:gpt-4o", "--run-dir", run,
    )  # fmt: skip
    assert result.exit_code == 2
    assert "unknown judge 'lm:gpt-4o'" in result.stderr
    from blindtest.model.judge_kinds import JUDGE_KINDS

    assert all(kind in result.stderr for kind in JUDGE_KINDS)  # llm:MODEL among them
    assert "llm:MODEL" in result.stderr
    assert files_in(run) == []
    assert simulator.requests == []


def test_run_quiet_prints_nothing_and_still_runs_every_stage(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    url = simulator.base_url
    result = invoke(
        "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
        "--judge", "bot:length", "--run-dir", run, "-q",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr == ""
    assert files_in(run) == EVERY_ARTIFACT


def test_run_html_writes_the_report_page_bt_analyze_writes(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run, page = tmp_path / "run", tmp_path / "report.html"
    url = simulator.base_url
    args = (
        "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
        "--judge", "bot:length", "--run-dir", run, "--seed", "page", "--html", page,
    )  # fmt: skip
    result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    assert artifacts.artifact_kind(page) == "html"
    assert files_in(run) == EVERY_ARTIFACT  # the page is where it was asked for, not in RUN
    analyzed = invoke("analyze", run, "--html", tmp_path / "analyzed.html")
    assert analyzed.exit_code == 0, analyzed.stderr
    assert page.read_bytes() == (tmp_path / "analyzed.html").read_bytes()
    assert "of 20 correct" in flat(page.read_text())
    # The same command again resumes: the page is its own, so it is written again.
    again = invoke(*args)
    assert again.exit_code == 0, again.stderr
    assert page.read_bytes() == (tmp_path / "analyzed.html").read_bytes()


def test_run_html_that_cannot_be_written_is_refused_before_anything_is_written(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    url = simulator.base_url
    taken = tmp_path / "taken.html"
    taken.write_text("<!doctype html><p>someone's page</p>")
    other_run_page = tmp_path / "other.html"
    other = invoke(
        "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
        "--judge", "bot:length", "--run-dir", tmp_path / "other", "--html", other_run_page,
    )  # fmt: skip
    assert other.exit_code == 0, other.stderr
    asked = len(simulator.requests)
    refusals = {
        taken: "is not a blindtest HTML report; refusing to overwrite it",
        other_run_page: "already exists and this run has no report of its own to replace it",
        tmp_path / "design.json": "design.json is the name of a run's design file",
    }
    for page, said in refusals.items():
        run = tmp_path / "run"
        result = invoke(
            "run", "sim-large", "sim-small", "--demo", "--a-url", url, "--b-url", url,
            "--judge", "bot:length", "--run-dir", run, "--html", page,
        )  # fmt: skip
        assert result.exit_code == 2, result.stderr
        assert said in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
        assert files_in(run) == []
    assert len(simulator.requests) == asked
    assert taken.read_text() == "<!doctype html><p>someone's page</p>"
