"""bt-analyze --junit, read by a real JUnit consumer (junitparser, as CI reads it): one test
case per decision, failed unless its exit code is 0, the failure's message its headline; and
the screens' words without a decision: what the interval allows, never "not worse"."""

from __future__ import annotations

from pathlib import Path

from junitparser import Failure, JUnitXml

from conftest import Invoke
from gate_runs import decision, design_of, gate_run, judge, outcome_picks
from report_runs import read_report


def cases(path: Path) -> list[tuple[str, list[Failure]]]:
    xml = JUnitXml.fromfile(str(path))
    return [
        (str(case.name), [r for r in case.result if isinstance(r, Failure)])
        for suite in xml
        for case in suite
    ]


def test_junit_has_one_passing_case_for_a_shown_claim(invoke: Invoke, tmp_path: Path) -> None:
    run = gate_run(tmp_path, trials=100, spec=decision(sensitivity=20))
    judge(run, outcome_picks(design_of(run), {"B": 50}, {"B": 40}, planted_wins=20))
    out = tmp_path / "decision.xml"
    result = invoke("analyze", run, "--junit", out, "--quiet")
    assert result.exit_code == 0
    assert cases(out) == [("noninferior:0.05: B against A", [])]
    again = invoke("analyze", run, "--junit", out, "--quiet")  # a rerun replaces it
    assert again.exit_code == 0, again.stderr


def test_junit_fails_each_challenger_that_is_not_shown_with_its_headline(
    invoke: Invoke, tmp_path: Path
) -> None:
    spec = decision(champion="big", sensitivity=10)
    run = gate_run(tmp_path, trials=100, spec=spec, candidates=("big", "c1", "c2"))
    records = outcome_picks(
        design_of(run), {"c1": 55, "c2": 20}, {"c1": 40, "c2": 70}, planted_wins=10, champion="big"
    )
    judge(run, records)
    out = tmp_path / "decision.xml"
    result = invoke("analyze", run, "--junit", out, "--quiet")
    assert result.exit_code == 4
    found = dict(cases(out))
    assert found["noninferior:0.05: c1 against big"] == []
    (failure,) = found["noninferior:0.05: c2 against big"]
    headline = read_report(run)["decision"]["decisions"][1]["headline"]
    assert failure.message == headline
    assert failure.type == "refuted"
    assert "c2 is worse than big by more than 5 points" in str(failure.message)


def test_a_fail_on_code_fails_every_case(invoke: Invoke, tmp_path: Path) -> None:
    run = gate_run(tmp_path, trials=100, spec=decision("superior"))
    judge(run, outcome_picks(design_of(run), {"B": 70}, {"B": 20}))
    out = tmp_path / "decision.xml"
    result = invoke("analyze", run, "--junit", out, "--strict", "--quiet", "--decide", "x")
    assert result.exit_code == 2  # the design already decides: refused, nothing written
    assert not out.exists()
    result = invoke("analyze", run, "--junit", out, "--fail-on", "llm.excluded", "--quiet")
    assert result.exit_code == 0
    assert cases(out)[0][1] == []


def test_junit_refuses_to_overwrite_a_file_that_is_not_its_own(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = gate_run(tmp_path, trials=20, spec=decision("superior"))
    judge(run, outcome_picks(design_of(run), {"B": 15}, {"B": 5}))
    out = tmp_path / "other.xml"
    out.write_text('<?xml version="1.0"?>\n<testsuites name="pytest"></testsuites>\n')
    result = invoke("analyze", run, "--junit", out, "--quiet")
    assert result.exit_code == 2
    assert "is not a blindtest JUnit file" in result.stderr


def test_without_a_decision_an_undecided_result_says_what_the_interval_allows(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = gate_run(tmp_path, trials=40)
    judge(run, outcome_picks(design_of(run), {"B": 18}, {"B": 18}))
    result = invoke("analyze", run)
    assert result.exit_code == 0
    assert "the data allow A to be preferred in up to" in result.stdout
    assert "--decide noninferior:0.05 --sensitivity 20" in result.stdout
    assert "adequate" not in result.stdout
    assert read_report(run)["verdict"] == "inconclusive"
