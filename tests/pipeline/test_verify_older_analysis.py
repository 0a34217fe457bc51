"""bt-verify tells a report written by another version of the analysis from a tampered one: a
report@1 preference report (written before report@2), or a report@2 of an older
``analysis_version``, is said in one line naming the command that analyses the run again
(exit 1), never as a list of every field that changed; run that command and the run verifies.
A triangle's report@1 (examples/run) still verifies as it is."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.analysis import report as builder
from blindtest.analysis.preference import ANALYSIS_VERSION

from conftest import Invoke

ROOT = Path(__file__).resolve().parents[2]
OLDER = ROOT / "tests" / "data" / "older_preference_run"


@pytest.fixture
def older(tmp_path: Path) -> Path:
    return Path(shutil.copytree(OLDER, tmp_path / "run"))


def _differs(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("DIFFERS  ")]


def _report(run: Path, name: str = "report.json") -> dict[str, Any]:
    return dict(orjson.loads((run / name).read_bytes()))


def test_a_report_at_1_of_a_preference_run_is_one_line_naming_the_command_that_renews_it(
    invoke: Invoke, older: Path
) -> None:
    assert _report(older)["schema"] == "blindtest/report@1"
    result = invoke("verify", older)
    assert result.exit_code == 1, result.output
    (line,) = _differs(result.stdout)
    assert "report.json: written by an older analysis (blindtest/report@1" in line
    assert f"this blindtest writes blindtest/report@2, analysis version {ANALYSIS_VERSION}" in line
    assert line.endswith(f"analyse the run again with: {_command(older)}")
    again = invoke("analyze", older, "--force")
    assert again.exit_code == 0, again.output
    assert _report(older)["schema"] == "blindtest/report@2"
    verified = invoke("verify", older)
    assert verified.exit_code == 0, verified.output


def _command(run: Path, *args: str) -> str:
    from blindtest.present.hints import stage_command

    return stage_command("analyze", str(run), *args, "--force")


def test_an_older_analysis_version_is_said_with_the_picks_and_report_it_was_made_from(
    invoke: Invoke, older: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (older / "picks-bot.jsonl").write_bytes((older / "picks.jsonl").read_bytes())
    made = invoke(
        "analyze", older, "--picks", older / "picks-bot.jsonl", "--out", older / "report-bot.json",
        "--min-kappa", "0.3", "--force",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    invoke("analyze", older, "--force")
    monkeypatch.setattr(builder, "ANALYSIS_VERSION", ANALYSIS_VERSION + 1)
    result = invoke("verify", older)
    assert result.exit_code == 1, result.output
    lines = _differs(result.stdout)
    assert len(lines) == 2, lines  # one line per report, never a list of fields
    bot = next(line for line in lines if "report-bot.json" in line)
    assert f"(blindtest/report@2, analysis version {ANALYSIS_VERSION}; this blindtest" in bot
    assert bot.endswith(
        _command(
            older, "--picks", str(older / "picks-bot.jsonl"), "--out",
            str(older / "report-bot.json"), "--min-kappa", "0.3",
        )
    )  # fmt: skip


@pytest.mark.parametrize("version", [1, 4])
def test_a_report_of_an_older_analysis_is_one_line_without_its_old_defaults(
    invoke: Invoke, older: Path, version: int
) -> None:
    """Analysis versions 1 to 4 recorded their defaults (--min-kappa 0.2, --position-margin
    0.1) in every report: they were not chosen, and the command that analyses the run again
    leaves them out (the current rules are the near-chance agreement gate and the 0.05
    margin); an option the user did choose is carried."""
    assert invoke("analyze", older, "--force").exit_code == 0
    current = _report(older)
    for options, carried in (
        ({"min_kappa": 0.2, "position_margin": 0.1, "reveal_void": False}, ()),
        (
            {"min_kappa": 0.3, "position_margin": 0.08, "reveal_void": False},
            ("--min-kappa", "0.3", "--position-margin", "0.08"),
        ),
    ):
        written = dict(current, analysis_version=version, analysis_options=options)
        # Version 1's position figures: the share of untied picks and its binomial test.
        written["position_bias"] = {"left": 10, "n": 20, "p_value": 1.0, "flagged": False}
        (older / "report.json").write_bytes(orjson.dumps(written))
        result = invoke("verify", older)
        assert result.exit_code == 1, result.output
        (line,) = _differs(result.stdout)
        assert (
            "report.json: written by an older analysis (blindtest/report@2, analysis version "
            f"{version};" in line
        )
        assert line.endswith(f"analyse the run again with: {_command(older, *carried)}")


def test_a_report_of_a_newer_analysis_is_said_without_a_command_that_would_undo_it(
    invoke: Invoke, older: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with monkeypatch.context() as patched:
        patched.setattr(builder, "ANALYSIS_VERSION", ANALYSIS_VERSION + 1)
        assert invoke("analyze", older, "--force").exit_code == 0
    result = invoke("verify", older)
    assert result.exit_code == 1, result.output
    (line,) = _differs(result.stdout)
    assert "written by a newer analysis" in line
    assert "verify it with the blindtest that wrote it" in line
    assert "bt-analyze" not in line


def test_the_example_triangle_run_at_report_1_verifies_as_it_is(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = Path(shutil.copytree(ROOT / "examples" / "run", tmp_path / "run"))
    assert _report(run)["schema"] == "blindtest/report@1"
    result = invoke("verify", run)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "verified: everything recomputes"
