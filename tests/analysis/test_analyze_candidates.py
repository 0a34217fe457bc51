"""bt-analyze on a several-candidate run: the pairs (Holm), the ranking, the reference, cost
and tokens beside them, the gates, and what is said in words when no strength exists.

The runs are built by hand (``candidate_analysis_runs``) and judged by seeded bots with known
strengths. Reference values are computed here independently: exact two-sided binomial
p-values by enumeration over Python integers (``report_runs.two_sided_half``), Wilson bounds
with mpmath (``report_runs.wilson``), Holm's step-down by hand.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from blindtest.analysis.api import analyze_run
from blindtest.analysis.report import VOID_KEYS
from blindtest.rundir import artifacts
from blindtest.stats.sizing import decision_sample_size

from candidate_analysis_runs import (
    ANSWER_TOKENS,
    PRICES,
    STRENGTHS,
    candidate_design,
    candidate_run,
    candidate_schemas,
    strength_picks,
    write_candidate_run,
)
from report_runs import read_report, two_sided_half, wilson, write_picks


@pytest.fixture(autouse=True)
def _schemas() -> Iterator[None]:
    with candidate_schemas():
        yield


def _analyze(invoke: Any, run: Path, *args: Any) -> tuple[Any, dict[str, Any]]:
    result = invoke("analyze", run, "--force", *args, env={"COLUMNS": "80"})
    return result, read_report(run)


def test_a_bot_with_known_strengths_is_ranked_in_their_order(tmp_path: Path, invoke: Any) -> None:
    run = candidate_run(tmp_path, prompts=40)
    result, report = _analyze(invoke, run)
    assert result.exit_code == 0, result.output
    section = report["candidates"]
    order = [r["candidate"] for r in section["ranking"]]
    assert order == sorted(STRENGTHS, key=lambda n: -STRENGTHS[n])
    assert section["anchor"] == "mean"
    assert section["scale"] == "log-odds"
    assert section["scale_meaning"].startswith("log-odds: a difference d")
    assert section["tie_model"] == "davidson"
    assert math.isclose(sum(r["strength"]["estimate"] for r in section["ranking"]), 0, abs_tol=1e-9)
    for record in section["ranking"]:
        strength = record["strength"]
        assert strength["lo"] < strength["estimate"] < strength["hi"]
    # The truth spans 2.4 on the log-odds scale: the extremes are separated.
    assert section["groups"][0][0] == "alpha"
    assert section["groups"][-1][-1] == "delta"
    assert section["bootstrap"]["unit"] == "prompt"
    assert section["bootstrap"]["resamples"] == 2000
    assert "prompt" in section["unit"]
    assert "comparison" in section["unit"]
    assert report["verdict"] == "ranked"
    # Every comparison was judged once: 6 pairs on each of 40 prompts.
    assert report["n"] == 240
    assert section["comparisons"] == 240
    assert section["prompts"] == 40


def test_each_pair_has_the_exact_test_the_wilson_interval_and_holm_across_the_ordered_pairs(
    tmp_path: Path, invoke: Any
) -> None:
    run = candidate_run(tmp_path, prompts=25)
    _, report = _analyze(invoke, run)
    pairs = report["candidates"]["pairs"]
    design: dict[str, Any] = dict(artifacts.load_design(run).design)
    picks = {
        p["trial"]: p["pick"] for p in artifacts.read_jsonl(run / "picks.jsonl", "picks").records
    }
    counted: dict[tuple[str, str], list[int]] = {}
    order = design["candidates"]
    for entry in design["arrangement"]:
        first, second = sorted((entry["left"], entry["right"]), key=order.index)
        row = counted.setdefault((first, second), [0, 0, 0])
        pick = picks[entry["trial"]]
        winner = None if pick == "tie" else entry[pick]
        row[2 if winner is None else 0 if winner == first else 1] += 1
    assert [(r["first"], r["second"]) for r in pairs["pairs"]] == sorted(
        counted, key=lambda pair: (order.index(pair[0]), order.index(pair[1]))
    )
    raw = []
    for record in pairs["pairs"]:
        wins, losses, ties = counted[(record["first"], record["second"])]
        assert (record["wins"], record["losses"], record["ties"]) == (wins, losses, ties)
        p = float(two_sided_half(wins, wins + losses))
        assert math.isclose(record["p_value"], p, rel_tol=1e-9)
        lo, hi = wilson(wins, wins + losses)
        assert math.isclose(record["win_rate"]["lo"], lo, rel_tol=1e-9)
        assert math.isclose(record["win_rate"]["hi"], hi, rel_tol=1e-9)
        raw.append(p)
    assert len(raw) == 6
    # The adjusted p and the mark are the separations': Holm by hand over the 12 ordered
    # pairs (each pair's two one-sided exact tails), the pair's adjusted p the smaller of its
    # two; sorted ascending, multiplied by (12 - rank), running maximum, capped at 1.
    tails = []
    for record in pairs["pairs"]:
        wins, losses = record["wins"], record["losses"]
        tails += [_upper_tail(wins, wins + losses), _upper_tail(losses, wins + losses)]
    h = len(tails)
    adjusted = [0.0] * h
    running = 0.0
    for rank, index in enumerate(sorted(range(h), key=tails.__getitem__)):
        running = max(running, min(1.0, (h - rank) * tails[index]))
        adjusted[index] = running
    for n, record in enumerate(pairs["pairs"]):
        expected = min(adjusted[2 * n], adjusted[2 * n + 1])
        assert math.isclose(record["p_holm"], expected, rel_tol=1e-9)
        assert record["significant"] == (expected <= 0.05)
        ahead = record["first"] if adjusted[2 * n] <= 0.05 else None
        ahead = record["second"] if adjusted[2 * n + 1] <= 0.05 else ahead
        if ahead is not None:
            assert record["ahead"] == ahead
    assert pairs["adjustment"].startswith("holm over ordered pairs")
    assert pairs["unit"] == "comparison"


def _upper_tail(wins: int, n: int) -> float:
    """P(Bin(n, 1/2) >= wins), exactly over Python integers (1 when n = 0)."""
    return float(Fraction(sum(math.comb(n, i) for i in range(wins, n + 1)), 2**n)) if n else 1.0


def test_cost_and_tokens_stand_beside_each_candidate(tmp_path: Path, invoke: Any) -> None:
    run = candidate_run(tmp_path, prompts=20)
    _, report = _analyze(invoke, run)
    for record in report["candidates"]["ranking"]:
        name = record["candidate"]
        assert record["answers"] == 20
        assert record["tokens"] == {
            "prompt": 20 * 10,
            "completion": 20 * ANSWER_TOKENS[name],
            "total": 20 * (10 + ANSWER_TOKENS[name]),
        }
        price_in, price_out = PRICES[name]
        cost = (200 * price_in + 20 * ANSWER_TOKENS[name] * price_out) / 1e6
        assert math.isclose(record["cost"], cost, rel_tol=1e-12)
        assert math.isclose(record["cost_per_answer"], cost / 20, rel_tol=1e-12)
    assert any(
        line.startswith("Cost per 1,000 answers:") for line in report["candidates"]["headline"]
    )


def test_a_cheaper_candidate_the_data_cannot_tell_from_the_leader_is_never_called_adequate(
    tmp_path: Path, invoke: Any
) -> None:
    # Seed 001: the leading candidate wins narrowly and costs far more. Without a margin fixed
    # in the design nothing shows the cheaper one is as good: the headline says what the data
    # allow and the pre-registered decision, with its comparisons, that would settle it.
    strengths = {"alpha": 0.15, "beta": 0.0, "gamma": -2.5, "delta": -2.6}
    run = candidate_run(tmp_path, prompts=30, strengths=strengths)
    result, report = _analyze(invoke, run)
    section = report["candidates"]
    top = [r["candidate"] for r in section["ranking"][:2]]
    assert set(top) == {"alpha", "beta"}
    assert set(section["best"]) == {"alpha", "beta"}
    assert any(set(group) >= {"alpha", "beta"} for group in section["groups"])
    words = " ".join(section["headline"])
    screen = " ".join(result.output.split())
    for said in (words, screen):
        assert "adequate" not in said
        assert "not worse" not in said
        assert "not shown worse" not in said
    cheaper = [line for line in section["headline"] if "cannot tell the cheaper" in line]
    leader = top[0]
    if leader == "alpha":
        (line,) = cheaper
        assert line.startswith("The data cannot tell the cheaper beta from alpha, the highest")
        assert "they allow alpha to be preferred in up to " in line
        assert "of the untied comparisons between them" in line
        assert "times as much per answer" in line or "twice as much" in line
        # The decision that would settle it, sized at the pair's tie rate.
        pair = next(r for r in section["pairs"]["pairs"] if {r["first"], r["second"]} == set(top))
        ties = pair["ties"] / (pair["wins"] + pair["losses"] + pair["ties"])
        size = decision_sample_size("noninferior", 0.05, true=0.5, ties=ties, power=0.8)
        assert "--pairs reference:alpha --decide noninferior:0.05 --sensitivity 20`" in line
        assert f"{size.smallest_n:,} comparisons of beta against alpha" in line
    else:  # beta leads and is the cheaper of the two: nothing cheaper to speak of
        assert not cheaper


def test_against_a_reference_each_candidate_has_its_win_rate_and_holm_and_the_reference_is_zero(
    tmp_path: Path, invoke: Any
) -> None:
    run = candidate_run(tmp_path, prompts=30, mode="reference:delta")
    result, report = _analyze(invoke, run)
    assert result.exit_code == 0, result.output
    section = report["candidates"]
    assert section["anchor"] == "delta"
    reference = next(r for r in section["ranking"] if r["candidate"] == "delta")
    assert reference["strength"] == {"estimate": 0.0, "lo": 0.0, "hi": 0.0}
    against = section["reference"]
    assert against["family"] == "against delta"
    assert [r["first"] for r in against["pairs"]] == ["alpha", "beta", "gamma"]
    assert {r["second"] for r in against["pairs"]} == {"delta"}
    for record in against["pairs"]:
        wins, losses = record["wins"], record["losses"]
        assert math.isclose(
            record["p_value"], float(two_sided_half(wins, wins + losses)), rel_tol=1e-9
        )
        assert record["win_rate"]["estimate"] == pytest.approx(wins / (wins + losses))
    # Holm over the 6 ordered pairs (each candidate ahead of, and behind, the reference).
    tails = []
    for record in against["pairs"]:
        wins, losses = record["wins"], record["losses"]
        tails += [_upper_tail(wins, wins + losses), _upper_tail(losses, wins + losses)]
    adjusted = [0.0] * 6
    running = 0.0
    for rank, index in enumerate(sorted(range(6), key=tails.__getitem__)):
        running = max(running, min(1.0, (6 - rank) * tails[index]))
        adjusted[index] = running
    for n, record in enumerate(against["pairs"]):
        expected = min(adjusted[2 * n], adjusted[2 * n + 1])
        assert math.isclose(record["p_holm"], expected, rel_tol=1e-9)
        assert record["significant"] == (expected <= 0.05)
    # Only pairs with the reference met.
    assert len(section["pairs"]["pairs"]) == 3
    assert any(line.startswith("Against the reference delta") for line in section["headline"])


def test_a_judge_drawn_to_the_left_fails_the_position_gate(tmp_path: Path, invoke: Any) -> None:
    run = candidate_run(tmp_path, prompts=30, left_bias=1.5)
    result, report = _analyze(invoke, run)
    assert result.exit_code == 1
    assert report["verdict"] == "unusable"
    assert report["gates_failed"][0].startswith("position bias")
    assert "position bias" in result.stderr
    assert report["statement"].startswith("Not a result:")


def test_judges_who_do_not_agree_fail_the_agreement_gate(tmp_path: Path, invoke: Any) -> None:
    # Equal candidates: two judges' picks are independent noise, so their agreement is low.
    even = dict.fromkeys(STRENGTHS, 0.0)
    run = candidate_run(tmp_path, prompts=20, strengths=even, judges=("bot:one", "bot:two"))
    result, report = _analyze(
        invoke, run, "--picks", run / "picks.jsonl", "--picks", run / "picks-bot-two.jsonl"
    )
    assert result.exit_code == 1
    assert report["verdict"] == "unusable"
    assert any(g.startswith("agreement:") for g in report["gates_failed"])
    assert report["agreement"]["n_judges"] == 2
    assert "the answer on the left preferred" in report["agreement"]["method"]


def test_agreeing_judges_pass_and_are_counted_by_majority(tmp_path: Path, invoke: Any) -> None:
    strong = {"alpha": 3.0, "beta": 1.0, "gamma": -1.0, "delta": -3.0}
    run = candidate_run(
        tmp_path, prompts=20, strengths=strong, judges=("bot:one", "bot:two"), nu=0.1
    )
    result, report = _analyze(
        invoke, run, "--picks", run / "picks.jsonl", "--picks", run / "picks-bot-two.jsonl"
    )
    assert result.exit_code == 0, result.output
    assert report["gates_failed"] == []
    assert report["n"] == 120  # comparisons, not picks
    assert len(report["per_trial"]) == 240


def test_a_candidate_that_never_loses_is_ranked_first_by_firths_fit_and_the_fit_is_named(
    tmp_path: Path, invoke: Any
) -> None:
    design = candidate_design(("alpha", "beta", "gamma"), prompts=10)
    run = write_candidate_run(tmp_path, design)
    loaded: dict[str, Any] = dict(artifacts.load_design(run).design)
    picks = []
    for n, entry in enumerate(loaded["arrangement"]):
        if "alpha" in (entry["left"], entry["right"]):
            pick = "left" if entry["left"] == "alpha" else "right"
        else:
            pick = ("left", "right", "tie")[n % 3]
        picks.append({"trial": entry["trial"], "judge": "bot:x", "judge_kind": "bot", "pick": pick})
    write_picks(run / "picks.jsonl", picks)
    result, report = _analyze(invoke, run)
    section = report["candidates"]
    # The maximum-likelihood estimate does not exist; Firth's penalised fit keeps the ranking.
    assert section["problem"] is None
    assert section["fit"] == "firth penalised likelihood"
    assert section["fit_reason"].startswith("alpha won every comparison it was in")
    assert section["ranking"][0]["candidate"] == "alpha"
    assert all(r["strength"]["estimate"] is not None for r in section["ranking"])
    assert all(r["strength"]["lo"] is not None for r in section["ranking"])
    assert [r["rank"] for r in section["ranking"]] == [1, 2, 3]
    assert (section["ranking"][0]["rank_best"], section["ranking"][0]["rank_worst"]) == (1, 1)
    assert section["best"] == ["alpha"]
    assert section["bootstrap"]["resamples"] == 0
    assert "profile" in section["bootstrap"]["interval_method"]
    assert report["verdict"] == "ranked"
    # The screen says which fit in words, and never counts resamples that were not drawn.
    screen = " ".join(result.output.split())
    assert "alpha is the best: the data put it ahead of every other candidate" in screen
    assert "a penalised fit (Firth), since alpha won every comparison it was in" in screen
    assert "profile penalised likelihood" in screen
    assert "0 resamples" not in screen
    assert "No strengths" not in screen
    assert not re.search(r"\b(nan|inf|infinity)\b", screen, re.IGNORECASE)


def test_an_unfinished_design_is_void_and_names_no_candidate(tmp_path: Path) -> None:
    design = candidate_design(prompts=10)
    run = write_candidate_run(tmp_path, design)
    loaded: dict[str, Any] = dict(artifacts.load_design(run).design)
    picks = strength_picks(loaded, STRENGTHS)[:-5]
    write_picks(run / "picks.jsonl", picks)
    result = analyze_run(run, [])
    assert result.exit_code == 1
    assert result.report["verdict"] == "void"
    assert set(result.report) <= {*VOID_KEYS, "picks_files"}
    shown = artifacts.dump_json(result.report).decode()
    assert not any(name in shown for name in ("model-", "beta", "gamma", "delta"))


def test_the_breakdown_by_tag_counts_each_candidate_per_tag(tmp_path: Path, invoke: Any) -> None:
    run = candidate_run(tmp_path, prompts=20)
    _, report = _analyze(invoke, run)
    by_tag = report["candidates"]["by_tag"]
    assert set(by_tag) == {"code", "prose"}
    assert sum(t["comparisons"] for t in by_tag.values()) == report["n"]
    for tag in by_tag.values():
        rows = {r["candidate"]: r for r in tag["candidates"]}
        assert sum(r["wins"] for r in rows.values()) == sum(r["losses"] for r in rows.values())
        for r in rows.values():
            assert r["n"] == r["wins"] + r["losses"]


def test_the_report_is_valid_and_deterministic(tmp_path: Path) -> None:
    run = candidate_run(tmp_path, prompts=15)
    first = analyze_run(run, []).report
    second = analyze_run(run, []).report
    assert artifacts.dump_json(first) == artifacts.dump_json(second)
    artifacts.write_json(tmp_path / "report.json", first, "report")  # schema-checked


def test_answers_read_from_files_have_no_tokens_rather_than_zero(tmp_path: Path) -> None:
    from blindtest.analysis.responses import responses_summary

    run = candidate_run(tmp_path, prompts=6)
    design = artifacts.load_design(run).design
    rows = [
        {k: v for k, v in row.items() if k != "usage"}
        for row in artifacts.read_jsonl(run / "responses.jsonl", "responses").records
    ]
    summary = responses_summary(design, rows, None)
    assert summary["complete"]
    for found in summary["per_side"].values():
        assert found["answered"] == 6
        assert found["prompt_tokens"] is None
        assert found["completion_tokens"] is None
