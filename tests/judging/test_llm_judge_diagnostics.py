"""each simulator judge's behaviour is detected and disclosed in the
report, end to end through bt-judge and bt-analyze; the diagnostics against hand-computed
reference values."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.analysis.llm_calibration import kappa_interval
from blindtest.analysis.llm_diagnostics import (
    Share,
    diagnose,
    markdown_marks,
    model_family,
    position_gate,
)
from blindtest.simulator import Simulator

from llm_runs import llm, make_run, records
from screen_text import flat


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDTEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def judged_report(
    invoke: Any, simulator: Simulator, run: Path, model: str, *extra: Any
) -> tuple[dict[str, Any], str]:
    out = run / f"picks-{model}.jsonl"
    judged = llm(invoke, run, model, "--out", out, *extra, url=simulator.base_url)
    assert judged.exit_code == 0, judged.output
    analyzed = invoke("analyze", run, "--picks", out, "--force")
    assert analyzed.exit_code in (0, 1), analyzed.output
    report = orjson.loads((run / "report.json").read_bytes())
    assert "llm_judges" in report
    (found,) = report["llm_judges"]["judges"]
    return found, flat(analyzed.stdout)  # the screen's words, unwrapped


@pytest.fixture
def preference_run(invoke: Any, simulator: Simulator, tmp_path: Path) -> Path:
    return make_run(invoke, simulator.base_url, tmp_path / "run", "preference", trials=20)


def test_always_first_judge_detected_position_bias_and_inconsistent_swaps(
    invoke: Any, simulator: Simulator, preference_run: Path
) -> None:
    found, screen = judged_report(invoke, simulator, preference_run, "sim-judge-first")
    position = found["position"]
    assert (position["comparisons"], position["inconsistent"]) == (20, 20)
    assert (position["first"], position["second"]) == (20, 0)
    assert found["swap_consistency"]["k"] == 0
    # Its position gate, every pass as shown: the output shown first each time, so every
    # comparison's left share is 1: shown beyond the margin, a failed gate (not a warning).
    gate = position["gate"]
    assert (gate["comparisons"], gate["picks"], gate["left"]) == (20, 40, 40)
    assert gate["verdict"] == "fail"
    assert position["exceeds_limit"] is True
    assert "position gate over 20 comparisons (every pass as shown): left share 100.0%" in screen
    assert "position swap: both passes agreed in 0% of 20 comparisons" in screen
    # Position-inconsistent comparisons still count as ties (the default --inconsistent tie),
    # but the judge answered by position: the run says nothing.
    report = orjson.loads((preference_run / "report.json").read_bytes())
    assert report["ties"] == 20
    assert report["verdict"] == "unusable"
    assert report["statement"].startswith("Not a result: position bias: the LLM judge")


def test_always_longer_judge_detected(
    invoke: Any, simulator: Simulator, preference_run: Path
) -> None:
    found, screen = judged_report(invoke, simulator, preference_run, "sim-judge-longer")
    assert found["p_longer"]["k"] == found["p_longer"]["n"] > 15  # comparisons, not passes
    assert found["swap_consistency"]["k"] == 20
    assert "the longer output in 100% of" in screen
    assert "position bias" not in screen


def test_fair_judge_with_noise_shows_no_position_warning(
    invoke: Any, simulator: Simulator, preference_run: Path
) -> None:
    found, screen = judged_report(invoke, simulator, preference_run, "sim-judge-fair")
    position = found["position"]
    assert position["p_value"] is None or position["p_value"] > 0.05  # what chance makes
    assert 0.6 <= found["swap_consistency"]["estimate"] < 1.0  # noise: a few disagree
    assert "position bias" not in screen


def test_low_confidence_judge_counted_as_ties_and_flagged(
    invoke: Any, simulator: Simulator, preference_run: Path
) -> None:
    found, screen = judged_report(invoke, simulator, preference_run, "sim-judge-unsure")
    assert found["low_confidence"] == 20
    assert "20 below --min-confidence (counted as ties, flagged for human review)" in screen
    rows = records(preference_run / "picks-sim-judge-unsure.jsonl")
    assert all("low_confidence" in r["flagged"] for r in rows if r["pass"] == 1)


def test_leaking_judge_excluded_and_listed(
    invoke: Any, simulator: Simulator, preference_run: Path
) -> None:
    found, screen = judged_report(invoke, simulator, preference_run, "sim-judge-leaky")
    leaks = found["leakage"]
    assert leaks
    assert found["excluded"] == len(leaks)
    assert all("sim-large" in leak["details"] for leak in leaks)
    assert f"{len(leaks)} with identity leakage; {len(leaks)} excluded from the test" in screen
    assert f"leakage in trial {leaks[0]['trial']}:" in screen
    report = orjson.loads((preference_run / "report.json").read_bytes())
    assert report["excluded"]["by_reason"] == {"identity_leakage": len(leaks)}


def test_malformed_judge_failures_and_retries_in_the_report(
    invoke: Any, simulator: Simulator, preference_run: Path
) -> None:
    out = preference_run / "picks-bad.jsonl"
    judged = llm(
        invoke, preference_run, "sim-judge-malformed", "--out", out, url=simulator.base_url
    )
    assert judged.exit_code == 3
    analyzed = invoke("analyze", preference_run, "--picks", out, "--force")
    report = orjson.loads((preference_run / "report.json").read_bytes())
    if "llm_judges" in report:  # a design left unfinished by failures reveals nothing
        (found,) = report["llm_judges"]["judges"]
        assert found["failures"] > 0
        assert found["retries"] > 0
    else:
        assert analyzed.exit_code == 1
        assert report["verdict"] == "void"


def test_inconsistent_exclude_is_recorded_on_the_comparison(
    invoke: Any, simulator: Simulator, preference_run: Path
) -> None:
    found, _ = judged_report(
        invoke, simulator, preference_run, "sim-judge-first", "--inconsistent", "exclude"
    )
    assert found["excluded"] == 20
    rows = records(preference_run / "picks-sim-judge-first.jsonl")
    assert {r["excluded"] for r in rows if r["pass"] == 1} == {"position_inconsistent"}


def test_judge_sharing_family_and_endpoint_with_a_side_is_warned(
    invoke: Any, simulator: Simulator, preference_run: Path
) -> None:
    _, screen = judged_report(invoke, simulator, preference_run, "sim-judge-fair")
    assert "is of the same family (sim) as side A (sim-large) and B (sim-small)" in screen
    assert f"same endpoint (http://127.0.0.1:{simulator.port}) as side A and B" in screen


# --------------------------------------------------------------------------- reference values


def test_share_p_value_matches_exact_enumeration() -> None:
    # Two-sided exact binomial by the minimum-likelihood rule, enumerated with Fractions:
    # P(X = j) for X ~ Bin(12, 1/2), summed over j with P(X = j) <= P(X = 9).
    from math import comb

    n, k = 12, 9
    probs = [Fraction(comb(n, j), 2**n) for j in range(n + 1)]
    expected = sum(p for p in probs if p <= probs[k])
    share = Share(k, n, 0.5)
    assert share.estimate == pytest.approx(0.75)
    assert share.p_value == pytest.approx(float(expected), rel=1e-12)  # 0.14599609375
    assert float(expected) == pytest.approx(0.14599609375, rel=1e-12)
    assert Share(0, 0, 0.5).p_value is None


def test_diagnose_counts_by_hand() -> None:
    options = {1: ("short one", "a much longer answer here\n- with\n- bullets"), 2: ("x y", "z")}
    rows = [
        {"trial": 1, "pass": 1, "verdict": "A", "pass_pick": "left", "position_consistent": False,
         "attempts": 2, "tokens": {"prompt": 10, "completion": 5}, "cost": 0.5},
        {"trial": 1, "pass": 2, "verdict": "A", "pass_pick": "right", "attempts": 1,
         "tokens": {"prompt": 10, "completion": 5}, "cost": 0.25},
        {"trial": 2, "pass": 1, "verdict": "B", "pass_pick": "right", "position_consistent": True,
         "flagged": ["low_confidence"], "identity_leakage": True,
         "identity_leakage_details": "names X", "attempts": 1},
        {"trial": 2, "pass": 2, "verdict": "A", "pass_pick": "right", "attempts": 1},
    ]  # fmt: skip
    failure = [{"trial": 3, "attempts": 4}]
    found = diagnose("j", "preference", rows, failure, options, {"A": {"model": "gpt-4o"}})
    assert found.position is not None
    assert found.longer is not None
    assert found.markdown is not None
    assert found.consistent is not None
    assert found.first is None  # preference: position is the split, not a per-pass share
    # Trial 1: both passes named the first output shown (A, A): inconsistent, first.
    # Trial 2: B then A, both the right output: consistent.
    split = found.position
    assert (split.comparisons, split.inconsistent, split.first, split.second) == (2, 1, 1, 0)
    # Longer: trial 1's passes disagree (counts for neither); trial 2 chose option 2, the
    # shorter. Markdown: trial 2 has none on either side.
    assert (found.longer.k, found.longer.n) == (0, 1)
    assert (found.markdown.k, found.markdown.n) == (0, 0)
    assert (found.consistent.k, found.consistent.n) == (1, 2)
    assert found.low_confidence == 1
    assert found.leakage == ({"trial": 2, "details": "names X"},)
    assert (found.requests, found.retries, found.failures, found.still_failed) == (9, 4, 1, 1)
    assert found.tokens == 30
    assert found.cost == pytest.approx(0.75)
    # 1 first, 0 second: sign test p = 1: no warning (see POSITION_ALPHA).
    assert found.warnings == ()
    many = [
        {"trial": t, "verdict": "A" if t <= 29 else "B", "judge_model": "gpt-4o-mini"}
        for t in range(1, 41)
    ]
    failed = diagnose("j", "preference", many, [], {}, {"A": {"model": "gpt-4o"}})
    # Without the swap: 29 of 40 comparisons named the first output, 11 the second; exact
    # two-sided p = 0.0064 (scipy.stats.binomtest(29, 40)); lean (29 - 11) / 40 = 45%. Its
    # left share's 95% interval (Clopper-Pearson, 56.1% to 85.4%) lies beyond 55%: the gate
    # fails, which is the run's failure, not a warning.
    assert failed.position_gate is not None
    assert failed.position_gate.verdict == "fail"
    said = position_gate(failed)
    assert said is not None
    assert said.startswith(
        "position bias: the LLM judge 'gpt-4o-mini' answered by position: of 40 comparisons "
        "(one pass each, no swap), 29 named the output shown first and 11 the output shown "
        "second (exact two-sided sign test p = 0.0064); position decided a net 45% of "
        "comparisons toward the first output"
    )
    assert "same family (gpt) as side A (gpt-4o)" in failed.warnings[0]
    # 120 of 200 first: a lean shown (p = 0.0057), its interval 52.9% to 66.8% reaching
    # inside the margin: a warning, the gate holds.
    leaning = [
        {"trial": t, "verdict": "A" if t <= 120 else "B", "judge_model": "gpt-4o-mini"}
        for t in range(1, 201)
    ]
    warned = diagnose("j", "preference", leaning, [], {}, {"A": {"model": "gpt-4o"}})
    assert warned.position_gate is not None
    assert (warned.position_gate.verdict, warned.position_gate.significant) == ("warn", True)
    assert position_gate(warned) is None
    assert warned.warnings[0].endswith(
        "over its comparisons it chose the output on the left in 60.0% of untied picks (95% "
        "interval 52.9% to 66.8%, sign-flip test p = 0.0057): a lean, not shown beyond 5 points "
        "from half"
    )


@pytest.mark.parametrize(
    ("model", "family"),
    [("gpt-4o", "gpt"), ("meta-llama/Llama-3-8B", "llama"), ("claude-3-5-sonnet", "claude"),
     ("sim-judge-fair", "sim")],
)  # fmt: skip
def test_model_family(model: str, family: str) -> None:
    assert model_family(model) == family


def test_markdown_marks() -> None:
    assert markdown_marks("# Title\n- a\n- b\n1. c\n**bold** and `code`") == 8
    assert markdown_marks("plain text") == 0


# --------------------------------------------------------------------------- 9: machine vs person


def test_kappa_interval_matches_the_textbook_table_and_mpmath() -> None:
    # Wikipedia's "Cohen's kappa" worked example: 50 items, yes/yes 20, yes/no 5, no/yes 10,
    # no/no 15: po = 0.7, pe = 0.5, kappa = 0.4. Interval with Fleiss, Cohen and Everitt's
    # (1969) SE, from statsmodels 0.15.0 cohens_kappa (tests/data/agreement_reference.py):
    # se = 0.12699606293110033; bounds 0.151092290476661 and 0.6489077095233389.
    first = ["yes"] * 25 + ["no"] * 25
    second = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    kappa, lo, hi, po, pe = kappa_interval(first, second)
    assert po == pytest.approx(0.7)
    assert pe == pytest.approx(0.5)
    assert kappa == pytest.approx(0.4, rel=1e-12)
    assert lo == pytest.approx(0.151092290476661, rel=1e-9)
    assert hi == pytest.approx(0.6489077095233389, rel=1e-9)
    # Agreement on every trial, or one trial: no zero-width interval, no bounds at all.
    assert kappa_interval(["a", "b"], ["a", "b"])[:3] == (1.0, *kappa_interval(["a"], ["b"])[1:3])
    assert math.isnan(kappa_interval(["a", "b"], ["a", "b"])[1])
    # Every label the same on both sides: chance agreement is perfect, kappa undefined.
    assert math.isnan(kappa_interval(["a"] * 3, ["a"] * 3)[0])
    with pytest.raises(ValueError, match="confidence_level must be in"):
        kappa_interval(["a"], ["b"], 1.0)


def test_llm_judge_against_a_person_reports_agreement_and_kappa(
    invoke: Any, simulator: Simulator, preference_run: Path
) -> None:
    machine = preference_run / "picks-llm.jsonl"
    assert llm(invoke, preference_run, "sim-judge-fair", "--out", machine,
               url=simulator.base_url).exit_code == 0  # fmt: skip
    person = preference_run / "picks-alice.jsonl"
    flip = {"left": "right", "right": "left", "tie": "left"}
    with person.open("wb") as out:
        for row in records(machine):
            if row["pass"] != 1:
                continue
            pick = flip[row["pick"]] if row["trial"] % 4 == 0 else row["pick"]
            out.write(
                orjson.dumps(
                    {
                        "schema": "blindtest/picks@1",
                        "trial": row["trial"],
                        "judge": "alice",
                        "pick": pick,
                        "judge_kind": "human",
                    }
                )
            )
            out.write(b"\n")  # fmt: skip
    # Pooled, they are refused (bots and LLM judges never join people) ...
    pooled = invoke("analyze", preference_run, "--picks", person, "--picks", machine)
    assert pooled.exit_code == 2
    # ... compared, they are reported side by side.
    result = invoke("analyze", preference_run, "--picks", person, "--against", machine, "--force")
    assert result.exit_code in (0, 1), result.output
    report = orjson.loads((preference_run / "report.json").read_bytes())
    (pair,) = report["machine_vs_person"]["pairs"]
    assert (pair["machine"], pair["person"], pair["n"], pair["agreed"]) == (
        "sim-judge-fair", "alice", 20, 15,
    )  # fmt: skip
    assert pair["kappa"]["lo"] < pair["kappa"]["estimate"] < pair["kappa"]["hi"]
    assert "sim-judge-fair vs alice: the same pick on 15 of 20 trials both judged; kappa" in (
        result.stdout
    )


# --------------------------------------------------------------------------- 11: export


def test_export_preferences_keeps_confident_consistent_leak_free_verdicts(
    invoke: Any, simulator: Simulator, preference_run: Path, tmp_path: Path
) -> None:
    machine = preference_run / "picks-leaky.jsonl"
    assert llm(invoke, preference_run, "sim-judge-leaky", "--out", machine,
               url=simulator.base_url).exit_code == 0  # fmt: skip
    out = tmp_path / "prefs.jsonl"
    result = invoke(
        "analyze", preference_run, "--picks", machine, "--export-preferences", out, "--quiet"
    )
    assert result.exit_code in (0, 1), result.output
    rows = records(out)
    picks = [r for r in records(machine) if r["pass"] == 1]
    leaking = sum(bool(r.get("identity_leakage")) for r in picks)
    assert 0 < len(rows) <= len(picks) - leaking
    trials = {t["prompt"]: t["options"] for t in records(preference_run / "trials.jsonl")}
    for row in rows:
        assert set(row) == {
            "prompt", "chosen", "rejected", "judge", "confidence", "reason", "text", "judge_saw"
        }  # fmt: skip
        assert sorted([row["chosen"], row["rejected"]]) == sorted(trials[row["prompt"]])
        assert row["confidence"] > 0.8
    assert f"{out}: {len(rows)} preference pairs kept; " in result.stderr
    assert "identity leakage" in result.stderr
    again = invoke("analyze", preference_run, "--picks", machine, "--export-preferences", out,
                   "--force", "--export-min-confidence", "0.95", "--quiet")  # fmt: skip
    assert again.exit_code in (0, 1)
    assert records(out) == []
    assert "confidence not above 0.95" in again.stderr


def test_export_refused_for_other_protocols_and_existing_files(
    invoke: Any, simulator: Simulator, tmp_path: Path, preference_run: Path
) -> None:
    tri = make_run(invoke, simulator.base_url, tmp_path / "tri", "triangle", trials=4)
    assert invoke("judge", tri, "--judge", "bot:random", "--quiet").exit_code == 0
    out = tmp_path / "prefs.jsonl"
    refused = invoke("analyze", tri, "--export-preferences", out)
    assert refused.exit_code == 2
    assert "needs a preference run; this run is triangle" in refused.stderr
    assert not out.exists()
    assert not (tri / "report.json").exists()
    out.write_text("x\n")
    assert llm(invoke, preference_run, "sim-judge-fair", url=simulator.base_url).exit_code == 0
    exists = invoke("analyze", preference_run, "--export-preferences", out)
    assert exists.exit_code == 2
    assert "already exists; use --force" in exists.stderr
