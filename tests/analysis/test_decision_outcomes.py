"""A pre-registered decision's outcomes and exit codes from constructed picks: 0 the claim
shown, 4 its opposite shown, 5 neither (with the n that would settle it), 1 no result; on two
sides and on candidates against a reference (Holm across the challengers, the worst outcome
the exit code), with and without a passing sensitivity check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.stats.decision import decide_counts
from blindtest.stats.sizing import decision_sample_size

from conftest import Invoke, files_in
from gate_runs import decision, design_of, gate_run, judge, outcome_picks
from report_runs import read_report


def analyze(invoke: Invoke, run: Path, *extra: Any) -> tuple[int, dict[str, Any], str]:
    result = invoke("analyze", run, "--force", *extra)
    return result.exit_code, read_report(run)["decision"], result.stdout


def two_sided(
    tmp_path: Path,
    wins: int,
    losses: int,
    *,
    rule: str = "noninferior:0.05",
    sensitivity: int = 20,
    planted_wins: int | None = None,
    trials: int = 100,
) -> Path:
    run = gate_run(tmp_path, trials=trials, spec=decision(rule, sensitivity=sensitivity))
    design = design_of(run)
    won = sensitivity if planted_wins is None else planted_wins
    judge(
        run,
        outcome_picks(
            design, {"B": wins}, {"B": losses}, planted_wins=won, planted_losses=sensitivity - won
        ),
    )
    return run


# --------------------------------------------------------------------------- two sides


def test_noninferiority_shown_with_a_passing_sensitivity_check_exits_0(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = two_sided(tmp_path, 50, 40)
    code, found, screen = analyze(invoke, run)
    assert code == 0
    assert found["outcome"] == "shown"
    assert found["exit_code"] == 0
    assert found["sensitivity"]["passed"] is True
    reference = decide_counts(50, 10, 40, "noninferior:0.05")
    assert found["estimate"] == pytest.approx(reference.estimate)
    assert found["interval"]["lo"] == pytest.approx(reference.interval.lo)
    assert found["interval_level"] == pytest.approx(0.9)
    assert found["p_value"] == pytest.approx(reference.p_value)
    only = found["decisions"][0]
    assert only["comparisons"] == 100
    assert only["cost_per_answer"]["challenger"] < only["cost_per_answer"]["champion"]
    assert "B (cheap) is not worse than A (big) by more than 5 points: SHOWN" in screen
    assert "exit 0: the claim is shown" in screen


def test_noninferiority_shown_by_the_test_is_not_shown_without_a_sensitivity_check(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = two_sided(tmp_path, 50, 40, sensitivity=0)
    code, found, _ = analyze(invoke, run)
    assert code == 5
    only = found["decisions"][0]
    assert (only["test_outcome"], only["outcome"]) == ("shown", "not_shown")
    assert "no sensitivity check was pre-registered" in only["reasons"][0]
    assert [w["code"] for w in found["warnings"]] == ["sensitivity.missing"]


def test_noninferiority_is_not_shown_when_the_sensitivity_check_fails(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = two_sided(tmp_path, 50, 40, planted_wins=10)  # 10 of 20: the judge cannot tell
    code, found, screen = analyze(invoke, run)
    assert code == 5
    assert found["sensitivity"]["passed"] is False
    assert "the sensitivity check failed" in found["decisions"][0]["reasons"][0]
    assert "FAILED" in screen


def test_noninferiority_refuted_exits_4_whatever_the_sensitivity_check(
    invoke: Invoke, tmp_path: Path
) -> None:
    for planted, name in ((20, "passing"), (10, "failing")):
        run = two_sided(tmp_path / name, 20, 70, planted_wins=planted)
        code, found, _ = analyze(invoke, run)
        assert code == 4, name
        assert found["outcome"] == "refuted"


def test_noninferiority_not_shown_exits_5_with_the_n_that_would_settle_it(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = two_sided(tmp_path, 10, 10, trials=20)
    code, found, screen = analyze(invoke, run)
    assert code == 5
    settle = found["decisions"][0]["settle"]
    planned = decision_sample_size("noninferior", 0.05, true=0.5, ties=0.0, power=0.8)
    assert (settle["n"], settle["stable_n"]) == (planned.smallest_n, planned.stable_n)
    assert f"{planned.smallest_n:,} comparisons" in screen


def test_superiority_shown_needs_no_sensitivity_check(invoke: Invoke, tmp_path: Path) -> None:
    run = two_sided(tmp_path, 70, 20, rule="superior", sensitivity=0)
    code, found, _ = analyze(invoke, run)
    assert (code, found["outcome"]) == (0, "shown")
    assert found["warnings"] == []


def test_equivalence_shown_and_refuted(invoke: Invoke, tmp_path: Path) -> None:
    # Equivalence within 10 points needs the whole 90% interval inside 40%..60%.
    run = two_sided(tmp_path / "same", 150, 150, rule="equivalent:0.1", trials=320)
    code, found, _ = analyze(invoke, run)
    assert (code, found["outcome"]) == (0, "shown")
    run = two_sided(tmp_path / "apart", 80, 20, rule="equivalent:0.1")
    code, found, _ = analyze(invoke, run)
    assert (code, found["outcome"]) == (4, "refuted")


def test_a_failed_gate_gives_no_result_and_exit_1(invoke: Invoke, tmp_path: Path) -> None:
    run = gate_run(tmp_path, trials=40, spec=decision(sensitivity=10))
    design = design_of(run)
    records = [{"trial": e["trial"], "judge": "a", "pick": "left"} for e in design["arrangement"]]
    judge(run, records)  # always left: the position gate fails
    code, found, _ = analyze(invoke, run)
    assert code == 1
    assert found["outcome"] == "no_result"
    assert "a gate failed" in found["decisions"][0]["reasons"][0]


def test_an_unfinished_fixed_design_gives_no_result_and_reveals_nothing(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = gate_run(tmp_path, trials=20, spec=decision(sensitivity=4))
    design = design_of(run)
    judge(run, outcome_picks(design, {"B": 10}, {"B": 5}, planted_wins=4)[:10])
    code, found, _ = analyze(invoke, run)
    assert code == 1
    assert found["outcome"] == "no_result"
    assert found["decisions"] == []
    assert "estimate" not in found


def test_a_position_warning_keeps_noninferiority_from_being_shown(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = gate_run(tmp_path, trials=60, spec=decision(sensitivity=10))
    design = design_of(run)
    records = outcome_picks(design, {}, {}, planted_wins=10)
    real = [e for e in design["arrangement"] if "planted" not in e]
    # B wins 35 of 60 (non-inferior alone: p 0.026), and 39 or 40 of the 60 picks are left
    # (65-67%): a lean the sign-flip test shows (p < 0.03), not shown beyond the 5-point
    # margin (its 95% interval reaches below 55%): the warning position.lean.
    left_b = [int(e["trial"]) for e in real if e["left"] == "B"]
    left_a = [int(e["trial"]) for e in real if e["left"] == "A"]
    lefts = 40 if (35 - len(left_a) + 40) % 2 == 0 else 39
    b_left = (35 - len(left_a) + lefts) // 2  # B's wins on the left; A's are lefts - b_left
    winners = {t: "left" for t in left_b[:b_left]} | {t: "right" for t in left_b[b_left:]}
    a_left = lefts - b_left
    winners |= {t: "left" for t in left_a[:a_left]} | {t: "right" for t in left_a[a_left:]}
    for record in records:
        record["pick"] = winners.get(int(record["trial"]), record["pick"])
    judge(run, records)
    code, found, _ = analyze(invoke, run)
    codes = [w["code"] for w in read_report(run)["warnings"]]
    assert "position.lean" in codes, "the constructed picks should raise a position warning"
    assert code == 5
    only = found["decisions"][0]
    assert only["test_outcome"] == "shown"
    assert any("position warning" in reason for reason in only["reasons"])


def test_a_decision_given_only_to_bt_analyze_is_not_pre_registered_and_exits_5_at_best(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = two_sided(tmp_path, 70, 20, rule="superior", sensitivity=0)
    # The same picks against a design without a decision.
    made = gate_run(tmp_path / "x", trials=100)
    records = outcome_picks(design_of(made), {"B": 70}, {"B": 20})
    judge(made, records)
    code, found, screen = analyze(invoke, made, "--decide", "superior")
    assert code == 5
    assert found["pre_registered"] is False
    assert found["decisions"][0]["test_outcome"] == "shown"
    assert "NOT PRE-REGISTERED" in screen
    assert read_report(made)["analysis_options"]["decide"] == "superior"
    assert invoke("verify", made).exit_code == 0  # bt-verify recomputes it from the report
    refused = invoke("analyze", run, "--force", "--decide", "superior")
    assert refused.exit_code == 2
    assert "the design pre-registers --decide superior" in refused.stderr


def test_fail_on_and_strict_win_over_4_and_5(invoke: Invoke, tmp_path: Path) -> None:
    run = two_sided(tmp_path, 50, 40, sensitivity=0)
    code, found, screen = analyze(invoke, run, "--fail-on", "sensitivity.missing")
    assert (code, found["failed_on"], found["decision_exit_code"]) == (
        1,
        ["sensitivity.missing"],
        5,
    )
    assert "--fail-on/--strict: sensitivity.missing raised" in screen
    # --strict fails on every serious warning: sensitivity.missing is a notice (the claim is
    # already held back: exit 5), a failed sensitivity check is serious.
    code, found, _ = analyze(invoke, run, "--strict")
    assert (code, found["failed_on"]) == (5, [])
    failed = two_sided(tmp_path / "failed", 50, 40, planted_wins=5)
    code, found, _ = analyze(invoke, failed, "--strict")
    assert (code, found["failed_on"], found["decision_exit_code"]) == (
        1,
        ["sensitivity.failed"],
        5,
    )
    code, _, _ = analyze(invoke, run, "--fail-on", "llm.length")
    assert code == 5


def test_fail_on_an_unknown_code_is_refused_and_writes_nothing(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = two_sided(tmp_path, 50, 40)
    before = files_in(run)
    result = invoke("analyze", run, "--fail-on", "sensitivity-faild")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1
    assert "--fail-on sensitivity-faild: no warning has that code" in result.stderr
    assert files_in(run) == before


def test_a_design_without_a_decision_refuses_the_gate_options(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = gate_run(tmp_path, trials=20)
    judge(run, outcome_picks(design_of(run), {"B": 10}, {"B": 5}))
    before = files_in(run)
    result = invoke("analyze", run, "--junit", tmp_path / "out.xml")
    assert result.exit_code == 2
    assert "--junit reads a decision, and this design pre-registers none" in result.stderr
    assert files_in(run) == before
    assert not (tmp_path / "out.xml").exists()


def test_bt_verify_recomputes_the_decision_and_stays_0_whatever_it_says(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = two_sided(tmp_path, 20, 70)
    assert analyze(invoke, run)[0] == 4
    assert invoke("verify", run).exit_code == 0
    report = read_report(run)
    report["decision"]["decisions"][0]["outcome"] = "shown"
    (run / "report.json").write_bytes(orjson.dumps(report))
    verified = invoke("verify", run)
    assert verified.exit_code == 1
    assert "report.json/decision/decisions/0/outcome" in verified.stdout


# --------------------------------------------------------------------------- candidates


def candidates_run(
    tmp_path: Path, wins: dict[str, int], losses: dict[str, int], sensitivity: int = 12
) -> Path:
    spec = decision(champion="big", sensitivity=sensitivity)
    run = gate_run(tmp_path, trials=100, spec=spec, candidates=("big", "c1", "c2"))
    records = outcome_picks(design_of(run), wins, losses, planted_wins=sensitivity, champion="big")
    judge(run, records)
    return run


def test_every_challenger_against_the_reference_shown_exits_0(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = candidates_run(tmp_path, {"c1": 55, "c2": 50}, {"c1": 40, "c2": 40})
    code, found, screen = analyze(invoke, run)
    assert code == 0
    assert [d["challenger"] for d in found["decisions"]] == ["c1", "c2"]
    assert all(d["adjustment"] == "holm:2" for d in found["decisions"])
    assert screen.count(": SHOWN") == 2


def test_the_worst_challenger_sets_the_exit_code_each_listed(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = candidates_run(tmp_path / "four", {"c1": 55, "c2": 20}, {"c1": 40, "c2": 70})
    code, found, _ = analyze(invoke, run)
    assert code == 4
    assert [d["outcome"] for d in found["decisions"]] == ["shown", "refuted"]
    assert [d["exit_code"] for d in found["decisions"]] == [0, 4]
    run = candidates_run(tmp_path / "five", {"c1": 55, "c2": 12}, {"c1": 40, "c2": 10})
    code, found, _ = analyze(invoke, run)
    assert code == 5
    assert [d["outcome"] for d in found["decisions"]] == ["shown", "not_shown"]


def test_holm_across_challengers_can_leave_a_claim_not_shown(
    invoke: Invoke, tmp_path: Path
) -> None:
    # 52 : 44 alone shows non-inferiority (p between alpha / 2 and alpha); two challengers
    # with the same p are each Holm-adjusted to 2p, above alpha: neither is shown.
    alone = decide_counts(52, 4, 44, "noninferior:0.05")
    assert 0.025 < alone.p_value <= 0.05
    run = candidates_run(tmp_path, {"c1": 52, "c2": 52}, {"c1": 44, "c2": 44})
    code, found, _ = analyze(invoke, run)
    assert code == 5
    for item in found["decisions"]:
        assert item["p_value_unadjusted"] == pytest.approx(alone.p_value)
        assert item["p_value"] == pytest.approx(2 * alone.p_value)
        assert item["outcome"] == "not_shown"


def test_candidates_without_a_sensitivity_check_leave_noninferiority_not_shown(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = candidates_run(tmp_path, {"c1": 55, "c2": 50}, {"c1": 40, "c2": 40}, sensitivity=0)
    code, found, _ = analyze(invoke, run)
    assert code == 5
    assert [d["test_outcome"] for d in found["decisions"]] == ["shown", "shown"]
    assert [d["outcome"] for d in found["decisions"]] == ["not_shown", "not_shown"]


# --------------------------------------------------------------------------- the unit


def test_a_panel_counts_each_comparison_once_as_the_mean_of_its_judges(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = gate_run(tmp_path, trials=60, spec=decision("superior"))
    design = design_of(run)
    alice = outcome_picks(design, {"B": 40}, {"B": 20}, judge="alice")
    bob = outcome_picks(design, {"B": 30}, {"B": 30}, judge="bob")
    judge(run, alice, "picks-alice.jsonl")
    judge(run, bob, "picks-bob.jsonl")
    result = invoke(
        "analyze", run, "--picks", run / "picks-alice.jsonl", "--picks", run / "picks-bob.jsonl",
        "--min-kappa", "-1",
    )  # fmt: skip
    found = read_report(run)["decision"]
    only = found["decisions"][0]
    assert only["comparisons"] == 60
    assert only["judges"] == {"2": 60}
    assert only["method"] == "betting"
    assert result.exit_code in (0, 5)


def test_per_tag_estimates_are_shown_and_decided_with_holm_on_request(
    invoke: Invoke, tmp_path: Path
) -> None:
    tags = {i: ("code",) if i % 2 else ("prose",) for i in range(1, 200)}
    run = gate_run(tmp_path, trials=100, spec=decision(sensitivity=10), tags=tags)
    judge(run, outcome_picks(design_of(run), {"B": 50}, {"B": 40}, planted_wins=10))
    code, found, _ = analyze(invoke, run)
    assert found["by_tag"]["decided"] is False
    assert set(found["by_tag"]["by_challenger"]["B"]) == {"code", "prose"}
    code_tag, _, screen = analyze(invoke, run, "--by-tag")
    found = read_report(run)["decision"]
    assert found["by_tag"]["decided"] is True
    assert "outcome" in found["by_tag"]["by_challenger"]["B"]["code"]
    assert code_tag == code  # per-tag decisions never set the exit code
    assert "per tag (Holm across tags; not the exit code)" in screen


# --------------------------------------------------------------------------- sequential


def test_a_sequential_decision_may_stop_before_the_end(invoke: Invoke, tmp_path: Path) -> None:
    run = gate_run(tmp_path, trials=200, spec=decision("superior", sequential=True))
    records = outcome_picks(design_of(run), {"B": 150}, {"B": 30})
    judge(run, records[:120])
    code, found, screen = analyze(invoke, run)
    assert code == 0
    assert read_report(run)["verdict"] == "void"  # the fixed analysis stays unrevealed
    only = found["decisions"][0]
    assert only["outcome"] == "shown"
    assert only["judged"] == 120
    assert only["stopped_at"] <= 120
    assert "ties are skipped" in found["unit"]
    assert "stopped at comparison" in screen


def test_a_sequential_decision_that_never_crosses_is_not_shown_never_refuted(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = gate_run(tmp_path, trials=60, spec=decision("superior", sequential=True))
    design = design_of(run)
    records = outcome_picks(design, {"B": 30}, {"B": 30})
    entries = {int(e["trial"]): e for e in design["arrangement"]}
    won = [r for r in records if (r["pick"] == "left") == (entries[r["trial"]]["left"] == "B")]
    lost = [r for r in records if r not in won]
    # Judged alternately, a win then a loss: the sequence never leaves 1/2.
    for n, record in enumerate(x for pair in zip(won, lost, strict=True) for x in pair):
        record["at"] = f"2030-01-01T00:{n // 60:02d}:{n % 60:02d}Z"
    judge(run, records)
    code, found, _ = analyze(invoke, run)
    assert code == 5
    only = found["decisions"][0]
    assert (only["outcome"], only["stop"]) == ("not_shown", "max_comparisons")
