"""Two candidates are two sides: a design of two named candidates and a two-sided design, on the
same answers and with the same candidate preferred on each prompt, give the same verdict, the
same figures and the same exit code, through the real commands (bt-design, bt-generate, bt-judge
with the length bot, bt-analyze). Their left/right arrangements come from different seeded
streams, so only what depends on position (the left share) may differ.

Two ways to the same answers: the simulator's two models (the longer one wins every comparison,
the case that once read "A preferred, won 20-0" on one side and "No ranking" on the other), and
two directories of answers whose lengths decide some comparisons each way and tie others.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import pytest

from blindtest.simulator import Simulator

from conftest import Invoke
from report_runs import read_report

#: Per item, which directory holds the longer answer ("=": the same length, a tie).
CLEAR = "AAAABAAA=AAAABA=AAB="  # 14 to 3, 3 ties: one side preferred
CLOSE = "AB=ABBA=AAB=ABAABA=A"  # 9 to 7, 4 ties: inconclusive
#: What is compared as a figure, at the top level and in the pair's test.
FIGURES = ("n", "wins", "losses", "ties", "p_value", "pc", "preference", "gates_failed")


def _answer_dirs(root: Path, pattern: str) -> tuple[Path, Path]:
    first, second = root / "model-a", root / "model-b"
    first.mkdir()
    second.mkdir()
    for n, longer in enumerate(pattern, start=1):
        short, long = "a plain answer of five", "a longer answer with more words in it, about"
        a, b = {"A": (long, short), "B": (short, long), "=": (short, short)}[longer]
        (first / f"item{n:02d}.txt").write_text(f"{a} item {n}.\n")
        (second / f"item{n:02d}.txt").write_text(f"{b} item {n}.\n")
    return first, second


def _run(invoke: Invoke, run: Path, *design: Any) -> tuple[int, dict[str, Any]]:
    """bt-design (with ``design``), bt-generate, bt-judge --judge bot:length, bt-analyze: the
    analysis's exit code and report.json."""
    steps = (("design", run, *design), ("generate", run), ("judge", run, "--judge", "bot:length"))
    for step in steps:
        done = invoke(*step)
        assert done.exit_code == 0, (step, done.output)
    analyzed = invoke("analyze", run)
    return analyzed.exit_code, read_report(run)


def _neutral(report: dict[str, Any], text: str) -> str:
    """``text`` with each candidate's names (as the report shows it, and bare before 's) put
    as <1> and <2>, so two reports that name their candidates differently compare."""
    section = report["candidates"]
    for n, name in enumerate(section["names"], start=1):
        text = text.replace(section["shown"][name], f"<{n}>").replace(f"{name}'s ", f"<{n}>'s ")
    return text


def _verdict(report: dict[str, Any]) -> tuple[str, int | None]:
    """('preferred', which candidate) or the verdict as it stands."""
    verdict = str(report["verdict"])
    if not verdict.endswith(" preferred"):
        return verdict, None
    section = report["candidates"]
    shown = [section["shown"][name] for name in section["names"]]
    return "preferred", shown.index(verdict.removesuffix(" preferred"))


def _pair(report: dict[str, Any]) -> dict[str, Any]:
    """The one pair's figures, its candidates by position (their names differ)."""
    (pair,) = report["candidates"]["pairs"]["pairs"]
    by_position = {pair["first"]: "first", pair["second"]: "second", None: None}
    return {
        **{k: v for k, v in pair.items() if k not in ("first", "second")},
        "ahead": by_position[pair["ahead"]],
    }


def _close(first: Any, second: Any) -> bool:
    """Equal JSON values, floats to 1e-9 relative (a fit's rows come in another order)."""
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(_close(first[k], second[k]) for k in first)
    if isinstance(first, list) and isinstance(second, list):
        return len(first) == len(second) and all(map(_close, first, second))
    if isinstance(first, float) and isinstance(second, float):
        return math.isclose(first, second, rel_tol=1e-9, abs_tol=1e-12)
    return bool(first == second)


def _same_result(two: tuple[int, dict[str, Any]], named: tuple[int, dict[str, Any]]) -> None:
    (code, sides), (code_named, candidates) = two, named
    assert sides["schema"] == candidates["schema"] == "blindtest/report@2"
    assert code == code_named
    assert _verdict(sides) == _verdict(candidates)
    for key in FIGURES:
        assert sides[key] == candidates[key], key
    assert _pair(sides) == _pair(candidates)
    assert sides["candidates"]["by_tag"] == candidates["candidates"]["by_tag"]
    assert _neutral(sides, sides["statement"]) == _neutral(candidates, candidates["statement"])
    for line in ("verdict", "sure", "size"):
        said = _neutral(sides, str(sides["summary"][line]))
        assert said == _neutral(candidates, str(candidates["summary"][line])), line
    positional = ("position.", "responses.")  # the arrangements differ, so may the left share
    codes = [w["code"] for w in sides["warnings"] if not w["code"].startswith(positional)]
    assert codes == [
        w["code"] for w in candidates["warnings"] if not w["code"].startswith(positional)
    ]
    # No ranking from two candidates: nothing says "No ranking", nothing is "ranked".
    for report in (sides, candidates):
        assert report["verdict"] != "ranked"
        assert "No ranking" not in report["statement"]
        assert report["candidates"]["bootstrap"] is None


@pytest.mark.parametrize(("pattern", "said"), [(CLEAR, "preferred"), (CLOSE, "inconclusive")])
def test_two_named_candidates_and_two_sides_on_the_same_answers_agree_on_every_figure(
    invoke: Invoke, tmp_path: Path, pattern: str, said: str
) -> None:
    first, second = _answer_dirs(tmp_path, pattern)
    two = _run(
        invoke, tmp_path / "two", "--from-dirs", first, second, "--protocol", "preference",
        "--trials", len(pattern), "--seed", "two-sided",
    )  # fmt: skip
    named = _run(
        invoke, tmp_path / "named", "--from-dirs", first, second, "--pairs", "all",
        "--seed", "named",
    )  # fmt: skip
    assert '"candidates"' not in (tmp_path / "two" / "design.json").read_text()
    assert '"candidates"' in (tmp_path / "named" / "design.json").read_text()
    _same_result(two, named)
    assert _verdict(two[1])[0] == said
    wins, losses, ties = (pattern.count(c) for c in "AB=")
    assert (two[1]["wins"], two[1]["losses"], two[1]["ties"]) == (wins, losses, ties)
    # The same answers, the same outcomes: style control fits the same comparisons.
    fitted = [r["style_control"] for r in (two[1], named[1])]
    numbers = [
        {k: v for k, v in f.items() if k not in ("lines", "technical", "covariates")}
        for f in fitted
    ]
    assert _close(*numbers)


def test_the_simulators_longer_model_is_preferred_alike_as_a_side_and_as_a_candidate(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("".join(f"Explain topic {n} briefly.\n" for n in range(1, 21)))
    url = simulator.base_url
    two = _run(
        invoke, tmp_path / "two", "--prompts", prompts, "--a", "sim-large", "--b", "sim-small",
        "--a-url", url, "--b-url", url, "--protocol", "preference", "--trials", "20",
        "--seed", "sides",
    )  # fmt: skip
    named = _run(
        invoke, tmp_path / "named", "--prompts", prompts, "--candidate", "large=sim-large",
        "--candidate", "small=sim-small", "--url", url, "--seed", "named",
    )  # fmt: skip
    _same_result(two, named)
    assert two[0] == 0
    assert (two[1]["wins"], two[1]["losses"]) == (20, 0)
    assert two[1]["verdict"] == "A (sim-large) preferred"
    assert named[1]["verdict"] == "large preferred"
    assert re.match(r"large won 20, small won 0, 0 ties", named[1]["statement"])
