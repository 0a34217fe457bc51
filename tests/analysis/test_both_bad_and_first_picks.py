"""The analysis of a rater's own records: "both bad" is an abstention (it finishes a fixed design,
counts once for each candidate of its comparison, and is left out of the win rates, the tests
and the ranking), each judge's skips and changes are counted, and after any change the same
analysis on the first picks stands beside the result (and bt-verify recomputes it)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from blindtest.analysis.api import AnalysisOptions, analyze_run
from blindtest.model.candidates import comparison_sides
from blindtest.rundir import artifacts
from blindtest.stats.decision import decide_counts

from candidate_analysis_runs import candidate_run
from gate_runs import decision, design_of, gate_run, judge, outcome_picks
from report_runs import (
    balanced_outcomes,
    cli,
    load,
    make_run,
    preference_picks,
    read_report,
    triangle_p,
    triangle_picks,
    two_sided_half,
    write_picks,
)


def _two_sided(
    tmp_path: Path, wins: int = 12, losses: int = 4
) -> tuple[Path, list[dict[str, Any]]]:
    run = make_run(tmp_path, "preference", 20)
    design = load(run)
    return run, preference_picks(design, balanced_outcomes(design, wins, losses))


def _said(picks: list[dict[str, Any]], trials: Sequence[int], word: str) -> list[dict[str, Any]]:
    return [{**p, "pick": word} if p["trial"] in trials else p for p in picks]


# --------------------------------------------------------------------------- both bad


def test_a_both_bad_pick_is_not_void_and_counts_for_both_candidates(tmp_path: Path) -> None:
    run, picks = _two_sided(tmp_path)
    write_picks(run / artifacts.PICKS, _said(picks, [1], "both_bad"))
    result = cli("analyze", run)
    report = read_report(run)
    assert report["verdict"] != "void", result.output
    assert report["judged"] == {"alice": 20}
    found = report["abstentions"]
    assert found["n"] == 1
    assert found["left_out"] == [1]  # the only word on it: no outcome
    assert found["by_judge"] == {"alice": 1}
    assert {r["candidate"]: (r["both_bad"], r["judged"]) for r in found["by_candidate"]} == {
        "A": (1, 20),
        "B": (1, 20),
    }
    assert found["listed"][0]["trial"] == 1
    assert "left out of the win rates, the tests and the ranking" in found["statement"]
    assert report["judge_counts"][0]["both_bad"] == 1


def test_both_bad_is_left_out_of_the_win_rate_and_the_test(tmp_path: Path) -> None:
    run, picks = _two_sided(tmp_path, wins=12, losses=4)  # trials 17..20 (by outcome) are ties
    design = load(run)
    ties = [e["trial"] for e in design["arrangement"]]
    outcome = balanced_outcomes(design, 12, 4)
    tied = [t for t in ties if outcome[t] == "tie"]
    won = [t for t in ties if outcome[t] == "A"][:2]
    write_picks(run / artifacts.PICKS, _said(picks, [*tied[:2], *won], "both_bad"))
    assert cli("analyze", run).exit_code == 0
    report = read_report(run)
    # Ten wins, four losses, two ties: "both bad" is neither a win nor a tie.
    assert (report["wins"], report["losses"], report["ties"]) == (10, 4, 2)
    assert report["n"] == 16
    assert report["p_value"] == pytest.approx(float(two_sided_half(10, 14)), rel=1e-12)
    assert report["pc"]["estimate"] == pytest.approx(10 / 14)
    assert report["abstentions"]["n"] == 4
    assert report["position_bias"]["picks"] == 14  # untied picks only


def test_both_bad_is_left_out_of_the_ranking(tmp_path: Path) -> None:
    run = candidate_run(tmp_path, prompts=12)
    design = load(run)
    picks = artifacts.read_jsonl(run / artifacts.PICKS, "picks").records
    said = {3, 8, 15}
    write_picks(run / artifacts.PICKS, _said(picks, list(said), "both_bad"))
    with_both_bad = analyze_run(run, [run / artifacts.PICKS]).report
    # The same picks without those comparisons, their analysis shown though unfinished.
    write_picks(run / "without.jsonl", [p for p in picks if p["trial"] not in said])
    without = analyze_run(run, [run / "without.jsonl"], AnalysisOptions(reveal_void=True)).report
    assert with_both_bad["verdict"] != "void"
    assert without["verdict"] == "void"

    def strengths(report: Mapping[str, Any]) -> dict[str, Any]:
        return {r["candidate"]: r["strength"] for r in report["candidates"]["ranking"]}

    assert strengths(with_both_bad) == strengths(without)
    assert with_both_bad["candidates"]["win_matrix"] == without["candidates"]["win_matrix"]
    per = {r["candidate"]: r["both_bad"] for r in with_both_bad["abstentions"]["by_candidate"]}
    expected = dict.fromkeys(design["candidates"], 0)
    for entry in design["arrangement"]:
        if entry["trial"] in said:
            expected[entry["left"]] += 1
            expected[entry["right"]] += 1
    assert per == expected
    assert sum(per.values()) == 2 * len(said)


def test_a_comparison_one_judge_called_both_bad_keeps_the_others_outcome(
    tmp_path: Path,
) -> None:
    run, picks = _two_sided(tmp_path)
    write_picks(run / artifacts.PICKS, picks)
    bob = [{**p, "judge": "bob"} for p in _said(picks, [1, 2], "both_bad")]
    write_picks(run / "picks-bob.jsonl", bob)
    result = analyze_run(run, [run / artifacts.PICKS, run / "picks-bob.jsonl"])
    found = result.report["abstentions"]
    assert (found["n"], found["comparisons"], found["left_out"]) == (2, 2, [])
    assert result.report["judges"] == ["alice", "bob"]
    assert result.report["judged"] == {"alice": 20, "bob": 20}


def test_answers_given_with_both_bad_count_in_the_yes_rate_not_in_the_association(
    tmp_path: Path,
) -> None:
    run = make_run(tmp_path, "preference", 20, extra_questions=("Any error?",))
    design = load(run)
    picks = preference_picks(design, balanced_outcomes(design, 12, 4))
    picks = [{**p, "answers": {"Any error?": p["trial"] <= 3}} for p in picks]
    write_picks(run / artifacts.PICKS, _said(picks, [1, 2], "both_bad"))
    assert cli("analyze", run).exit_code == 0
    (entry,) = read_report(run)["answers"]
    assert entry["comparisons"]["n"] == 20  # every answer, "both bad" ones too
    assert entry["comparisons"]["yes"] == 3
    by = entry["comparisons"]["by_preferred"]
    assert by["both_bad"] == {"yes": 2, "n": 2}
    table = entry["association"]["table"]
    assert sum(table.values()) == by["A"]["n"] + by["B"]["n"]  # neither ties nor "both bad"
    assert '2 of 2 "both bad" yes, left out of that test' in entry["statement"]


def test_an_export_drops_both_bad_and_says_so(tmp_path: Path) -> None:
    run, picks = _two_sided(tmp_path)
    picks = [{**p, "confidence": 0.9} for p in picks]
    write_picks(run / artifacts.PICKS, _said(picks, [1, 2, 3], "both_bad"))
    from blindtest.analysis.api import export_rows

    rows, dropped = export_rows(run, [run / artifacts.PICKS], 0.8)
    assert dropped["both bad"] == 3
    assert len(rows) + sum(dropped.values()) == 20


# --------------------------------------------------------------------------- skips, changes


def _skip(trial: int, judge: str = "alice") -> dict[str, Any]:
    return {"trial": trial, "judge": judge, "pick": "skipped", "skipped": True}


def test_the_skip_rate_and_the_changes_of_each_rater_are_reported(tmp_path: Path) -> None:
    run, picks = _two_sided(tmp_path)
    # Trials 1 and 2 put off (1 twice) and answered later; trial 5 changed once.
    records = [_skip(1), _skip(2), *picks[2:], _skip(1), picks[0], picks[1]]
    records.append({**picks[4], "pick": "tie" if picks[4]["pick"] != "tie" else "left",
                    "correction": True})  # fmt: skip
    write_picks(run / artifacts.PICKS, records)
    assert cli("analyze", run).exit_code == 0
    report = read_report(run)
    assert report["judge_counts"] == [
        {
            "judge": "alice",
            "judged": 20,
            "both_bad": 0,
            "changed": 1,
            "skipped": 3,
            "skipped_trials": 2,
            "unresolved": 0,
            "skip_rate": 2 / 20,
        }
    ]


def test_no_result_on_first_picks_when_nothing_was_changed(tmp_path: Path) -> None:
    run, picks = _two_sided(tmp_path)
    write_picks(run / artifacts.PICKS, picks)
    assert cli("analyze", run).exit_code == 0
    assert read_report(run)["first_picks"] is None


def _changed(picks: list[dict[str, Any]], trials: Sequence[int], word: str) -> list[dict[str, Any]]:
    """``picks`` as first given, then a change to ``word`` on each of ``trials``."""
    return [
        *picks,
        *({**p, "pick": word, "correction": True} for p in picks if p["trial"] in trials),
    ]


def test_the_result_on_first_picks_stands_beside_the_result_after_a_change(
    tmp_path: Path,
) -> None:
    run, picks = _two_sided(tmp_path, wins=9, losses=7)  # inconclusive as first given
    design = load(run)
    outcome = balanced_outcomes(design, 9, 7)
    lost = [t for t, side in outcome.items() if side == "B"]
    # Six of B's wins changed to A's: 15 to 1, then A is preferred.
    left = {e["trial"]: e["left"] for e in design["arrangement"]}
    changed = [*picks]
    for trial in lost[:6]:
        word = "left" if left[trial] == "A" else "right"
        changed.append({**picks[trial - 1], "pick": word, "correction": True})
    write_picks(run / artifacts.PICKS, changed)
    assert cli("analyze", run).exit_code == 0
    report = read_report(run)
    assert (report["wins"], report["losses"]) == (15, 1)
    first = report["first_picks"]
    assert first["changes"] == 6
    assert first["by_judge"] == {"alice": 6}
    assert first["words_changed"] == 6
    assert first["verdict"] == "inconclusive"
    assert report["verdict"] != "inconclusive"
    assert first["same_verdict"] is False
    figures = first["figures"]
    assert (figures["wins"], figures["losses"], figures["ties"]) == (9, 7, 4)
    assert figures["p_value"] == pytest.approx(float(two_sided_half(9, 16)), rel=1e-12)
    assert "Inconclusive" in first["statement"]
    assert report["judge_counts"][0]["changed"] == 6


def test_a_change_and_its_change_back_leave_the_word_as_it_was(tmp_path: Path) -> None:
    run, picks = _two_sided(tmp_path)
    first = picks[0]["pick"]
    other = "tie" if first != "tie" else "left"
    records = [*_changed(picks, [1], other), {**picks[0], "correction": True}]
    write_picks(run / artifacts.PICKS, records)
    assert cli("analyze", run).exit_code == 0
    found = read_report(run)["first_picks"]
    assert (found["changes"], found["words_changed"], found["same_verdict"]) == (2, 0, True)


def test_the_first_picks_of_a_ranking_give_each_candidates_rank_and_strength(
    tmp_path: Path,
) -> None:
    run = candidate_run(tmp_path, prompts=12)
    picks = artifacts.read_jsonl(run / artifacts.PICKS, "picks").records
    flipped = {"left": "right", "right": "left", "tie": "tie"}
    changes = [
        {**p, "pick": flipped[p["pick"]], "correction": True} for p in picks if p["trial"] <= 10
    ]
    write_picks(run / artifacts.PICKS, [*picks, *changes])
    report = analyze_run(run, [run / artifacts.PICKS]).report
    first = report["first_picks"]
    assert first is not None
    untouched = analyze_run(run, [run / artifacts.PICKS], first_words=True).report
    assert first["verdict"] == untouched["verdict"]
    assert first["ranking"] == [
        {"candidate": r["candidate"], "rank": r["rank"], "strength": r["strength"]}
        for r in untouched["candidates"]["ranking"]
    ]
    assert first["headline"] == untouched["candidates"]["headline"]
    assert first["changes"] == len(changes)


def test_bt_verify_recomputes_the_result_on_first_picks(tmp_path: Path) -> None:
    run, picks = _two_sided(tmp_path)
    write_picks(run / artifacts.PICKS, _changed(picks, [1, 2], "tie"))
    assert cli("analyze", run).exit_code == 0
    assert cli("verify", run).exit_code == 0
    path = run / artifacts.REPORT
    report = json.loads(path.read_text())
    report["first_picks"]["figures"]["wins"] += 1
    path.write_text(json.dumps(report))
    verified = cli("verify", run)
    assert verified.exit_code == 1
    assert "report.json/first_picks/figures/wins" in verified.stdout


def test_a_pre_registered_decision_leaves_both_bad_out_as_the_tests_do(tmp_path: Path) -> None:
    run = gate_run(tmp_path, trials=100, spec=decision("noninferior:0.05", sensitivity=20))
    design = design_of(run)
    picks = outcome_picks(design, {"B": 50}, {"B": 40}, planted_wins=20)
    entries = {e["trial"]: e for e in design["arrangement"]}
    real = [p for p in picks if "planted" not in entries[p["trial"]]]
    ties = [p["trial"] for p in real if p["pick"] == "tie"][:4]
    b_won = [
        p["trial"]
        for p in real
        if p["pick"] != "tie" and comparison_sides(entries[p["trial"]])[p["pick"] == "right"] == "B"
    ][:2]
    judge(run, _said(picks, [*ties, *b_won], "both_bad"))
    result = cli("analyze", run)
    report = read_report(run)
    assert result.exit_code == 0, result.output
    assert report["verdict"] not in ("void", "incomplete")
    assert report["abstentions"]["n"] == 6
    (only,) = report["decision"]["decisions"]
    assert only["comparisons"] == 94  # the six "both bad" words are no comparison's outcome
    reference = decide_counts(48, 6, 40, "noninferior:0.05")
    assert report["decision"]["estimate"] == pytest.approx(reference.estimate)
    assert report["decision"]["p_value"] == pytest.approx(reference.p_value)


def test_a_triangle_report_gives_the_result_on_first_picks_with_its_own_figures(
    tmp_path: Path,
) -> None:
    run = make_run(tmp_path, "triangle", 20)
    design = load(run)
    picks = triangle_picks(design, 12)
    odd = {e["trial"]: e["odd_position"] for e in design["arrangement"]}
    wrong = [p for p in picks if p["pick"] != odd[p["trial"]]][:4]
    # Four wrong answers changed to right: 16 of 20 on the last word, 12 on the first.
    fixes = [{**p, "pick": odd[p["trial"]], "correction": True} for p in wrong]
    write_picks(run / artifacts.PICKS, [*picks, *fixes])
    cli("analyze", run)
    report = read_report(run)  # validated against report@1 on read
    assert report["correct"] == 16
    first = report["first_picks"]
    assert first["figures"]["correct"] == 12
    assert first["figures"]["n"] == 20
    assert first["figures"]["p_value"] == pytest.approx(float(triangle_p(12, 20)), rel=1e-12)
    assert first["changes"] == first["words_changed"] == 4
    assert report["judge_counts"][0]["changed"] == 4
