"""Hidden controls counted by comparison: they describe the judge where nothing differs (two
draws of one model) and never withdraw a result. Each judge's tie rate and left share there,
with their intervals, and its rate of preferring one output beside its rate on the real trials
(a one-sided Fisher exact test kept as a description of its calibration); a significant
preference from a judge that prefers as often on the controls keeps its verdict; the controls'
picks feed the position gate; all of it on the screen, in the HTML report and recomputed by
bt-verify."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from blindtest.rundir import artifacts
from blindtest.simulator import Simulator
from blindtest.stats import MIN_COMPARISONS, clopper_pearson, compare_non_tie

from conftest import Invoke
from data.controls_fisher_reference import FISHER_GREATER
from screen_text import flat


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDTEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


# ------------------------------------------------------------------------- the statistics


@pytest.mark.parametrize(("real_k", "real_n", "control_k", "control_n", "expected"), FISHER_GREATER)
def test_fisher_one_sided_p_matches_exact_hypergeometric_enumeration(
    real_k: int, real_n: int, control_k: int, control_n: int, expected: float
) -> None:
    found = compare_non_tie(real_k, real_n, control_k, control_n)
    assert found.testable
    assert found.p_value == pytest.approx(expected, rel=1e-9, abs=1e-15)
    assert found.alternative == "greater"
    rate = found.control_rate()
    assert rate is not None
    assert rate.estimate == pytest.approx(control_k / control_n, rel=1e-12)


def test_fewer_than_five_comparisons_in_a_group_is_not_tested() -> None:
    assert MIN_COMPARISONS == 5
    few = compare_non_tie(20, 20, 0, 4)
    assert not few.testable
    assert few.p_value is None
    assert few.to_dict()["p_value"] is None
    assert few.summary()["control_rate"]["hi"] == pytest.approx(clopper_pearson(0, 4).hi)
    assert not compare_non_tie(4, 4, 0, 20).testable
    empty = compare_non_tie(0, 0, 0, 0)
    assert empty.control_rate() is None
    assert empty.real_rate() is None


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((6, 5, 0, 5), r"real_non_tie must be in \[0, real_n\] = \[0, 5\], got 6"),
        ((1, 5, -1, 5), "control_non_tie must be an integer >= 0, got -1"),
        ((1, 5, 1, 2.5), "control_n must be an integer >= 0, got 2.5"),
    ],
)
def test_bad_counts_are_refused_with_the_value(args: tuple[Any, ...], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        compare_non_tie(*args)


@cache
def _cp(k: int, n: int) -> tuple[float, float]:
    found = clopper_pearson(k, n)
    return found.lo, found.hi


def _covered(k: np.ndarray, n: np.ndarray, target: float) -> float:
    hits = [
        (lo <= target <= hi) for lo, hi in (_cp(int(a), int(b)) for a, b in zip(k, n, strict=True))
    ]
    return float(np.mean(hits))


@pytest.mark.parametrize("controls", [10, 20])
def test_position_interval_by_comparison_keeps_its_coverage_when_the_habit_varies(
    controls: int,
) -> None:
    """A swapped LLM judge whose pull to the first position varies between comparisons
    (uniform on [0, 1]; the two passes of one comparison share it). Counting every pass, the
    exact interval around the first position's share covered the true share (1/2) about
    0.92 of the time at 10 and 20 controls; with the comparison as the unit (first-first
    against second-second comparisons, the position split the report now uses) it covers
    its target E[p^2] / (E[p^2] + E[(1-p)^2]) = 1/2 at least 95% of the time."""
    rng = np.random.default_rng(20261203 + controls)
    runs = 4000
    habit = rng.random((runs, controls))
    first = rng.random((runs, controls, 2)) < habit[..., None]  # each pass: named the first?
    # Before: every pass an observation.
    per_pass = _covered(first.sum(axis=(1, 2)), np.full(runs, 2 * controls), 0.5)
    # Now: a comparison went with the first position when both passes named the output shown
    # first (passes that named different outputs went with neither: a consistent verdict).
    both_first = first.all(axis=2).sum(axis=1)
    both_second = (~first).all(axis=2).sum(axis=1)
    decided = both_first + both_second
    kept = decided > 0
    per_comparison = _covered(both_first[kept], decided[kept], 0.5)
    assert per_pass < 0.935  # the fault the unit fixes (binomial error at 4000 runs: 0.004)
    assert per_comparison >= 0.95 - 3 * (0.95 * 0.05 / kept.sum()) ** 0.5


@pytest.mark.parametrize("controls", [10, 20])
def test_control_non_tie_interval_by_comparison_covers_the_rate(controls: int) -> None:
    """A swapped LLM judge whose tie habit and position pull vary between comparisons: a
    comparison is a preference when both passes are untied and chose the same output (the
    real trials' rule). Each comparison is one Bernoulli draw, so the interval over
    comparisons covers the rate q = E[(1-t)^2] E[2p(1-p)] = 1/3 * 1/3 at least 95%."""
    rng = np.random.default_rng(7 + controls)
    runs = 4000
    tie = rng.random((runs, controls))
    habit = rng.random((runs, controls))
    untied = rng.random((runs, controls, 2)) >= tie[..., None]
    first = rng.random((runs, controls, 2)) < habit[..., None]
    same_output = first[..., 0] != first[..., 1]  # the swap shows it first in one pass only
    preferred = (untied.all(axis=2) & same_output).sum(axis=1)
    coverage = _covered(preferred, np.full(runs, controls), 1 / 9)
    assert coverage >= 0.95 - 3 * (0.95 * 0.05 / runs) ** 0.5


def test_fisher_test_holds_its_size_when_the_rates_are_equal() -> None:
    """Same non-tie rate on real and control comparisons: the one-sided test rejects at most
    alpha of the time (Fisher's conditional test is conservative)."""
    rng = np.random.default_rng(11)
    runs = 3000
    real = rng.binomial(20, 0.6, runs)
    control = rng.binomial(8, 0.6, runs)
    p_values = [
        compare_non_tie(int(r), 20, int(c), 8).p_value for r, c in zip(real, control, strict=True)
    ]
    rejected = np.mean([p is not None and p <= 0.05 for p in p_values])
    assert rejected <= 0.05 + 3 * (0.05 * 0.95 / runs) ** 0.5


# ------------------------------------------------------------------------------ the CLI


def _lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def _load(path: Path) -> Any:
    return orjson.loads(path.read_bytes())


def _made(invoke: Invoke, run: Path, url: str, trials: int, controls: int) -> Path:
    made = invoke(
        "design", run, "--demo", "--protocol", "preference", "--trials", trials,
        "--controls", controls, "--a", "sim-large", "--b", "sim-small", "--a-url", url,
        "--b-url", url, "--seed", "controls-comparison",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    return run


def test_a_judge_that_prefers_as_often_on_controls_keeps_its_verdict(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    """sim-judge-longer prefers the longer output every time: A (the longer side) on all 20
    real trials, and one of two draws of one model on all 8 controls. Controls cannot show a
    judge that follows length, and positions are randomised: the verdict names A, and the
    judge's length habit is the serious warning at the top."""
    url = simulator.base_url
    run = _made(invoke, tmp_path / "run", url, 20, 8)
    judged = invoke("judge", run, "--judge", "llm:sim-judge-longer", "--judge-url", url)
    assert judged.exit_code == 0, judged.output
    analysed = invoke("analyze", run, "--html", tmp_path / "report.html")
    assert analysed.exit_code == 0, analysed.output
    report = _load(run / artifacts.REPORT)
    assert report["wins"] == 20
    assert report["p_value"] < 0.001
    assert report["verdict"] == "A (sim-large) preferred"
    assert "controls_verdict" not in report
    assert "controls.indistinguishable" not in {w["code"] for w in report["warnings"]}
    assert report["warnings"][0]["code"] == "llm.length"
    (found,) = report["controls"]["judges"]
    assert found["unit"].startswith("comparisons (the two passes")
    assert found["controls"] == 8
    assert found["verdicts"] == 16  # both passes read
    assert found["non_tie"] == 8
    described = found["description"]
    assert (described["comparisons"], described["picks"], described["ties"]) == (8, 16, 0)
    assert described["tie_rate"]["interval"]["estimate"] == 0.0
    # Both passes named the longer draw, shown once on each side: every comparison 1/2 left.
    assert described["left_share"]["interval"]["estimate"] == pytest.approx(0.5)
    compared = found["real_vs_controls"]
    assert compared["real"] == {"comparisons": 20, "non_tie": 20}
    assert compared["control"] == {"comparisons": 8, "non_tie": 8}
    assert compared["p_value"] == pytest.approx(1.0)  # described, decides nothing
    assert compared["decides"].startswith("nothing")
    # The controls' 8 comparisons feed the position gate beside the 20 real ones.
    assert report["position_bias"]["controls"] == 8
    assert report["position_bias"]["comparisons"] == 28
    headline = report["summary"]["verdict"]
    assert headline.startswith("A (sim-large) is preferred: it won 20 of 20 untied")
    screen = flat(analysed.stdout)
    assert screen.index("SERIOUS WARNING") < screen.index(headline)
    assert screen.index(headline) < screen.index("Hidden controls: 8 of the 28")
    assert "they decide no verdict" in screen
    assert "hold it back" not in screen
    html = flat((tmp_path / "report.html").read_text())
    assert "tie rate (95% interval)" in html
    assert "not distinguishable from its behaviour" not in html
    # bt-verify recomputes it; an edited figure or verdict fails.
    assert invoke("verify", run).exit_code == 0
    for where, value in (("tie_rate", None), ("verdict", "inconclusive")):
        tampered = _load(run / artifacts.REPORT)
        if where == "verdict":
            tampered["verdict"] = value
        else:
            tampered["controls"]["judges"][0]["description"][where] = value
        (run / artifacts.REPORT).write_bytes(artifacts.dump_json(tampered))
        result = invoke("verify", run)
        assert result.exit_code == 1, result.output
        assert "report.json" in result.output
        (run / artifacts.REPORT).write_bytes(artifacts.dump_json(report))


def _picks(run: Path, judge: str, choose: Any) -> list[dict[str, Any]]:
    design = _load(run / artifacts.DESIGN)
    sha = (run / artifacts.DESIGN_HASH).read_text().split()[0]
    return [
        {
            "trial": e["trial"],
            "judge": judge,
            "pick": choose(e),
            "judge_kind": "external",
            "design_sha256": sha,
        }
        for e in design["arrangement"]
    ]


def _a_side(entry: dict[str, Any]) -> str:
    return "left" if entry["left"] == "A" else "right"


def test_a_judge_that_ties_where_nothing_differs_keeps_its_verdict(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    from judge_runs import write_picks

    run = _made(invoke, tmp_path / "run", simulator.base_url, 12, 6)
    write_picks(run / artifacts.PICKS, _picks(
        run, "ext", lambda e: "tie" if "control" in e else _a_side(e)))  # fmt: skip
    analysed = invoke("analyze", run)
    assert analysed.exit_code == 0, analysed.output
    report = _load(run / artifacts.REPORT)
    assert report["verdict"] == "A (sim-large) preferred"
    (found,) = report["controls"]["judges"]
    compared = found["real_vs_controls"]
    assert compared["p_value"] == pytest.approx(1 / 18564)  # 1 / C(18, 6)
    assert compared["distinguishable"] is True
    described = found["description"]
    assert described["tie_rate"]["interval"]["estimate"] == 1.0
    # One judge, one pick per comparison: Clopper-Pearson at 6 of 6.
    assert described["tie_rate"]["interval"]["lo"] == pytest.approx(clopper_pearson(6, 6).lo)
    assert described["left_share"] is None  # every pick a tie: position decided none
    assert (
        "it tied in 100% (95% interval 54% to 100%) of its picks, and position decided none"
        in flat(analysed.stdout)
    )
    assert "It preferred one output in 0 of the 6 counted control comparisons and in 12 of " \
        "12 real ones" in flat(analysed.stdout)  # fmt: skip


def test_three_controls_are_described_with_their_intervals_and_decide_nothing(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    from judge_runs import write_picks

    run = _made(invoke, tmp_path / "run", simulator.base_url, 12, 3)
    write_picks(run / artifacts.PICKS, _picks(run, "ext", _a_side))
    analysed = invoke("analyze", run)
    report = _load(run / artifacts.REPORT)
    assert report["verdict"] == "A (sim-large) preferred"
    (found,) = report["controls"]["judges"]
    assert found["real_vs_controls"]["p_value"] is None
    assert found["real_vs_controls"]["testable"] is False
    described = found["description"]
    assert described["tie_rate"]["interval"] == {"estimate": 0.0, "lo": 0.0, "hi": pytest.approx(
        clopper_pearson(0, 3).hi)}  # fmt: skip
    screen = flat(analysed.stdout)
    assert "they decide no verdict" in screen
    assert "too few (fewer than 5)" not in screen


def test_a_panel_is_described_judge_by_judge_and_together(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    """Two judges in one file: one ties on every control, one picks the left output there.
    Each is described; every judge together beside them; the verdict both gave on the real
    trials stands, and the left picks on the controls feed the position gate."""
    from judge_runs import write_picks

    run = _made(invoke, tmp_path / "run", simulator.base_url, 12, 6)
    careful = _picks(run, "careful", lambda e: "tie" if "control" in e else _a_side(e))
    eager = _picks(run, "eager", lambda e: "left" if "control" in e else _a_side(e))
    write_picks(run / artifacts.PICKS, [*careful, *eager])
    analysed = invoke("analyze", run)
    report = _load(run / artifacts.REPORT)
    judges = {j["judge"]: j for j in report["controls"]["judges"]}
    assert judges["careful"]["real_vs_controls"]["p_holm"] == pytest.approx(2 / 18564)
    assert judges["eager"]["real_vs_controls"]["p_holm"] == pytest.approx(1.0)
    assert judges["eager"]["description"]["left_share"]["interval"]["estimate"] == 1.0
    assert judges["eager"]["description"]["p_position"] == pytest.approx(2 / 64)
    pooled = report["controls"]["pooled"]
    # Per comparison: careful's tie and eager's left: tie share 1/2, left share 1.
    assert pooled["tie_rate"]["interval"]["estimate"] == pytest.approx(0.5)
    assert pooled["left_share"]["interval"]["estimate"] == 1.0
    assert report["verdict"] == "A (sim-large) preferred"
    assert report["position_bias"]["controls"] == 6
    assert "Every judge together tied in 50%" in flat(analysed.stdout)
