"""A judge's flaws at the top, with codes: every serious warning is named before the result on
the screen and the report page; ``bt-analyze --fail-on CODE,...`` and ``--strict`` (every serious
code) make it exit 1 for CI, as ``blindtest run`` does; and an LLM judge whose every verdict fell
below ``--min-confidence`` measured nothing: the run fails, it does not say "no side is
preferred". Checked against the simulator's judges (sim-judge-longer, sim-judge-unsure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from blindtest.analysis.warnings import CODES, RETIRED, SERIOUS
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke
from llm_runs import llm, make_run
from report_runs import read_report
from screen_text import flat


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDTEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def longer_run(invoke: Invoke, simulator: Simulator, tmp_path: Path) -> Path:
    """30 comparisons judged by sim-judge-longer: the longer answer (A's) every time."""
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "preference", trials=30)
    judged = llm(invoke, run, "sim-judge-longer", url=simulator.base_url)
    assert judged.exit_code == 0, judged.output
    return run


def test_a_judge_that_follows_length_is_named_before_the_result_on_screen_and_page(
    invoke: Invoke, longer_run: Path, tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    result = invoke("analyze", longer_run, "--html", page)
    assert result.exit_code == 0, result.output  # the verdict stands; CI asks with --strict
    report = read_report(longer_run)
    assert report["verdict"] == "A (sim-large) preferred"
    top = report["warnings"][0]
    assert (top["code"], top["severity"]) == ("llm.length", SERIOUS)
    assert top["title"] == CODES["llm.length"][1]
    screen = flat(result.stdout)
    named = "llm.length (sim-judge-longer): an LLM judge's verdicts follow length"
    assert named in screen
    assert screen.index("SERIOUS WARNINGS, before the result") < screen.index(named)
    assert screen.index(named) < screen.index("A (sim-large) is preferred")
    html = page.read_text()
    assert 'id="serious"' in html
    assert html.index('id="serious"') < html.index('id="verdict"')
    assert 'id="serious-llm.length"' in html


def test_strict_and_fail_on_turn_warnings_into_exit_1_for_ci(
    invoke: Invoke, longer_run: Path
) -> None:
    strict = invoke("analyze", longer_run, "--strict")
    assert strict.exit_code == 1
    assert strict.stderr.strip() == (
        "bt-analyze: exit 1 (--strict): the report warns llm.length (sim-judge-longer), "
        "llm.markdown (sim-judge-longer)"
    )
    assert read_report(longer_run)["verdict"] == "A (sim-large) preferred"  # the same report
    chosen = invoke("analyze", longer_run, "--force", "--fail-on", "tell.length,llm.length")
    assert chosen.exit_code == 1
    assert "(--fail-on): the report warns llm.length (sim-judge-longer)" in chosen.stderr
    notice = invoke("analyze", longer_run, "--force", "--fail-on", "llm.same_family")
    assert notice.exit_code == 1
    absent = invoke("analyze", longer_run, "--force", "--fail-on", "tell.length")
    assert absent.exit_code == 0, absent.output
    assert absent.stderr == ""


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("llm.lenght", "--fail-on llm.lenght: no warning has that code; give some of gate."),
        (
            "controls.indistinguishable",
            "--fail-on controls.indistinguishable: retired (analysis version 5",
        ),
    ],
)
def test_an_unknown_or_retired_code_is_refused_in_one_line_before_anything_is_written(
    invoke: Invoke, longer_run: Path, code: str, says: str
) -> None:
    result = invoke("analyze", longer_run, "--fail-on", code)
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert says in result.stderr
    assert not (longer_run / artifacts.REPORT).exists()
    assert set(RETIRED).isdisjoint(CODES)


def test_blindtest_run_takes_strict_and_fails_on_the_length_judge(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    url = simulator.base_url
    run = tmp_path / "run"
    result = invoke(
        "run", "sim-large", "sim-small", "--demo", "--protocol", "preference", "--trials",
        "12", "--a-url", url, "--b-url", url, "--seed", "strict",
        "--judge", "llm:sim-judge-longer", "--judge-url", url, "--run-dir", run, "--strict",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "bt-analyze: exit 1 (--strict): the report warns llm.length" in flat(result.stderr)
    assert read_report(run)["warnings"][0]["code"] == "llm.length"
    refused = invoke("run", "--demo", "--run-dir", tmp_path / "other", "--fail-on", "nope.x")
    assert refused.exit_code == 2
    assert not (tmp_path / "other").exists()


def test_a_judge_unsure_of_every_verdict_measured_nothing_and_fails_the_run(
    invoke: Invoke, simulator: Simulator, tmp_path: Path
) -> None:
    """sim-judge-unsure answers with confidence 0.4, below the default --min-confidence 0.7:
    every comparison became a tie. That is no "no side is preferred": the judge measured
    nothing, so the run fails (exit 1) and says why."""
    run = make_run(invoke, simulator.base_url, tmp_path / "run", "preference", trials=12)
    judged = llm(invoke, run, "sim-judge-unsure", url=simulator.base_url)
    assert judged.exit_code == 0, judged.output
    result = invoke("analyze", run)
    assert result.exit_code == 1
    report = read_report(run)
    assert report["verdict"] == "unusable"
    assert report["ties"] == 12
    (gate,) = report["gates_failed"]
    assert gate.startswith(
        "unsure: the LLM judge 'sim-judge-unsure' gave every one of its 12 counted verdicts a "
        "confidence below --min-confidence 0.7, so each counted as a tie: it measured nothing"
    )
    assert report["warnings"][0] == {
        "code": "gate.unsure",
        "severity": SERIOUS,
        "title": CODES["gate.unsure"][1],
        "message": gate,
        "judge": "sim-judge-unsure",
    }
    assert report["llm_judges"]["judges"][0]["every_verdict_unsure"] is True
    assert "no side is preferred" not in flat(result.stdout).lower()
    assert flat(result.stderr).startswith("bt-analyze: Not a result: unsure: the LLM judge")
