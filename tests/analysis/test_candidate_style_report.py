"""Style control in a several-candidate report: ``report["style_control"]``
built from the answers' texts and the picks, the plain lines printed after the ranking, the
schema, and bt-verify recomputing it (and catching a changed figure)."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blindtest.errors import BadInput
from blindtest.pipeline.recompute import verify_reports
from blindtest.rundir import artifacts
from blindtest.rundir.artifacts.validation import validate

import candidate_analysis_runs
from candidate_analysis_runs import candidate_design, candidate_run, candidate_schemas
from candidate_analysis_runs import write_candidate_run as write_run
from report_runs import read_report, write_picks

#: Equal quality, typical lengths in words: the judge below prefers the longer answer only.
WORDS = {"alpha": 8, "beta": 14, "gamma": 24, "delta": 40}


@pytest.fixture(autouse=True)
def _schemas() -> Iterator[None]:
    with candidate_schemas():
        yield


def _words(prompt_id: str, name: str) -> int:
    jitter = random.Random(f"{prompt_id}:{name}").randint(0, 6)
    return WORDS[name] + jitter


def _length_run(root: Path, monkeypatch: pytest.MonkeyPatch, prompts: int = 40) -> Path:
    """Four candidates whose answers differ only in length; the judge picks the longer answer
    with logit 3 x the normalised length difference (no quality difference at all)."""
    monkeypatch.setattr(
        candidate_analysis_runs,
        "answer_text",
        lambda pid, name: " ".join(f"{name}-{pid}-w{i}" for i in range(_words(pid, name))),
    )
    design = candidate_design(("alpha", "beta", "gamma", "delta"), prompts, "all")
    run = write_run(root, design)
    loaded = artifacts.load_design(run).design
    rng = random.Random(3)
    picks = []
    for e in loaded["arrangement"]:
        a, b = _words(e["prompt_id"], e["left"]), _words(e["prompt_id"], e["right"])
        p_left = 1 / (1 + math.exp(-3 * (a - b) / (a + b)))
        pick = "left" if rng.random() < p_left else "right"
        picks.append({"trial": e["trial"], "judge": "bot:len", "judge_kind": "bot", "pick": pick})
    write_picks(run / artifacts.PICKS, picks)
    return run


def _analyze(invoke: Any, run: Path) -> tuple[Any, dict[str, Any]]:
    result = invoke("analyze", run, "--force", env={"COLUMNS": "80"})
    return result, read_report(run)


def test_a_length_only_judge_ranks_by_length_and_style_control_only_describes_it(
    tmp_path: Path, invoke: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _length_run(tmp_path, monkeypatch)
    result, report = _analyze(invoke, run)
    assert result.exit_code == 0, result.output
    section = report["candidates"]
    assert section["ranking"][0]["candidate"] == "delta"
    assert any(d["separated"] for d in section["differences"])  # the raw ranking separates
    style = report["style_control"]
    assert style["fitted"]
    assert style["n"] == 240
    assert style["prompts"] == 40
    assert style["interval_unit"] == "prompt"
    assert "prompt" in style["interval_method"]
    assert "Wald" in style["interval_method"]
    # The style-controlled differences are intervals that claim nothing: which candidates
    # differ is the separations' word alone.
    assert all("separated" not in d for d in style["differences"])
    # delta's answer is the longest on every prompt: its strength at equal style has no
    # number (below), and the mean anchor is the others'.
    given = [s for s in style["strengths"].values() if s["status"] == "estimated"]
    assert len(given) == 3
    assert math.isclose(sum(s["strength"]["estimate"] for s in given), 0, abs_tol=1e-9)
    assert style["terms"]["length"]["status"] == "estimated"
    assert style["terms"]["markdown"]["status"] == "no variation"
    # On the screen: after the ranking's tables, where every preference screen says style
    # control (with the diagnostics), in plain words.
    out = result.output
    at = out.index("Style control, 240 untied comparisons")
    assert out.index("Ranking: strength") < out.index("Pairs (") < at
    flat = " ".join(out[at:].split())
    assert "a description: which candidates differ is the pair tests' word" in flat
    assert "told apart" not in out[at : out.index("What a bot can explain")]
    end = out.index("What a bot can explain")
    assert max(len(line) for line in out[at:end].splitlines()) <= 80


def test_distinct_candidates_keep_their_order_with_style_held_equal(
    tmp_path: Path, invoke: Any
) -> None:
    # The fixture's answers all have the same length and no markdown: nothing to hold equal,
    # so the model is the ranking's Bradley-Terry without ties and the order holds.
    run = candidate_run(tmp_path, prompts=40)
    result, report = _analyze(invoke, run)
    assert result.exit_code == 0, result.output
    style = report["style_control"]
    assert style["order_holds"] is True
    assert style["order"] == [r["candidate"] for r in report["candidates"]["ranking"]]
    assert {t["status"] for t in style["terms"].values()} == {"no variation"}
    assert all("separated" not in d for d in style["differences"])
    assert "the ranking's order is the same" in result.output
    flat = " ".join(result.output.split())
    style_words = flat[flat.index("Style control,") : flat.index("What a bot can explain")]
    # Its own Bonferroni Wald intervals tell no candidates apart: the separations do.
    assert "told apart" not in style_words
    assert " over " not in style_words
    assert "Told apart (of 6 pairs that met): alpha ahead of" in flat
    assert "No style term varies" in flat


def test_a_reference_anchor_is_kept(tmp_path: Path, invoke: Any) -> None:
    run = candidate_run(tmp_path, prompts=20, mode="reference:alpha")
    result, report = _analyze(invoke, run)
    assert result.exit_code == 0, result.output
    style = report["style_control"]
    assert style["anchor"] == "alpha"
    assert style["strengths"]["alpha"]["strength"] == {"estimate": 0.0, "lo": 0.0, "hi": 0.0}


def test_too_few_untied_comparisons_are_not_fitted_and_it_says_so(
    tmp_path: Path, invoke: Any
) -> None:
    run = candidate_run(tmp_path, prompts=1, names=("alpha", "beta", "gamma"))
    result, report = _analyze(invoke, run)
    style = report["style_control"]
    assert style["fitted"] is False
    assert "not fitted; it needs at least 10 untied comparisons" in style["lines"][0]
    assert "Style control: not fitted" in result.output


def test_the_schema_holds_the_section_and_refuses_a_wrong_value(
    tmp_path: Path, invoke: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _length_run(tmp_path, monkeypatch, prompts=12)
    _analyze(invoke, run)
    report = read_report(run)
    validate(report, "report", "report.json")
    report["style_control"]["separation"] = "partly"
    with pytest.raises(BadInput):
        validate(report, "report", "report.json")


def test_bt_verify_recomputes_the_style_control_and_catches_a_changed_figure(
    tmp_path: Path, invoke: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _length_run(tmp_path, monkeypatch, prompts=12)
    _analyze(invoke, run)
    assert verify_reports(run).differences == []
    report = read_report(run)
    report["style_control"]["terms"]["length"]["coefficient"]["estimate"] += 0.5
    (run / "report.json").write_bytes(artifacts.dump_json(report))
    where = [d.where for d in verify_reports(run).differences]
    assert "report.json/style_control/terms/length/coefficient/estimate" in where


def test_the_covariates_are_the_two_sided_style_differences_left_minus_right(
    tmp_path: Path, invoke: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Refit from the texts with the two-sided analysis's own style_differences (left answer
    # first): the report's figures are the same.
    from blindtest.analysis.style import COVARIATES, style_differences
    from blindtest.stats.candidate_style import candidate_style_control

    run = _length_run(tmp_path, monkeypatch, prompts=15)
    _, report = _analyze(invoke, run)
    design = artifacts.load_design(run).design
    names = list(design["candidates"])
    trials = {r["trial"]: r for r in artifacts.read_jsonl(run / "trials.jsonl", "trials").records}
    rows = [r for r in report["per_trial"] if r["preferred"] is not None]
    prompt_ids = sorted({r["prompt_id"] for r in rows})
    found = candidate_style_control(
        names,
        [names.index(r["left"]) for r in rows],
        [names.index(r["right"]) for r in rows],
        [int(r["preferred"] == r["left"]) for r in rows],
        [style_differences(*trials[r["trial"]]["options"]) for r in rows],
        COVARIATES,
        [prompt_ids.index(r["prompt_id"]) for r in rows],
    )
    style = report["style_control"]
    assert [s.status for s in found.strengths] == [
        style["strengths"][s.candidate]["status"] for s in found.strengths
    ]
    for s in found.strengths:
        recorded = style["strengths"][s.candidate]["strength"]
        if s.status != "estimated":
            assert recorded == {"estimate": None, "lo": None, "hi": None}
            continue
        assert recorded["estimate"] == pytest.approx(s.strength.estimate, abs=1e-12)
        assert recorded["hi"] == pytest.approx(s.strength.hi, abs=1e-12)
    length = style["terms"]["length"]["coefficient"]["estimate"]
    assert length == pytest.approx(found.terms[0].coefficient.estimate, abs=1e-12)


def test_a_changed_order_is_said_with_the_rankings_order_beside_it(
    tmp_path: Path, invoke: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _length_run(tmp_path, monkeypatch)
    _, report = _analyze(invoke, run)
    style = report["style_control"]
    raw = [r["candidate"] for r in report["candidates"]["ranking"]]
    first = " ".join(style["lines"][0].split())
    placed = [c for c in raw if c in style["order"]]
    if style["order_holds"]:
        assert "the ranking's order of the candidates with a strength is the same" in first
    else:
        assert f"the ranking has {', '.join(placed)}" in first
    assert "-0.00" not in " ".join(style["lines"])


def test_a_candidate_longer_in_every_comparison_has_no_strength_at_equal_style(
    tmp_path: Path, invoke: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # delta's answer is longer than every other answer on every prompt: no comparison shows it
    # at equal style, so its strength there has no number (null, status "extrapolated"), the
    # screen and the page say why, and the others' strengths are anchored at their own mean
    # (its extrapolated value moves none of them).
    run = _length_run(tmp_path, monkeypatch, prompts=20)
    result, report = _analyze(invoke, run)
    assert result.exit_code == 0, result.output
    assert "Warning" not in result.stderr
    style = report["style_control"]
    delta = style["strengths"]["delta"]
    assert delta["status"] == "extrapolated"
    assert delta["strength"] == {"estimate": None, "lo": None, "hi": None}
    assert delta["se"] is None
    assert delta["confounded"] == [["length", 1]]
    assert delta["comparisons"] == 60
    assert style["extrapolated"] == ["delta"]
    assert "delta" not in style["order"]
    assert all("delta" not in (d["first"], d["second"]) for d in style["differences"])
    placed = [r["candidate"] for r in report["candidates"]["ranking"] if r["candidate"] != "delta"]
    assert style["order_holds"] == (style["order"] == placed)
    validate(report, "report", "report.json")
    main = " ".join(" ".join(style["lines"]).split())
    assert (
        "delta's strength at equal style cannot be estimated: its answer was longer in every "
        "one of its 60 comparisons" in main
    )
    assert f"(it won {delta['wins']} of 60" in main
    technical = " ".join(" ".join(style["technical"]).split())
    assert "the mean of the candidates with a strength at 0" in technical
    assert "delta cannot be estimated (no comparison at equal style)" in technical
    flat = " ".join(result.output.split())
    assert "delta's strength at equal style cannot be estimated" in flat
    # The report page's table says it too.
    from blindtest.present.page.sections import style_control

    page = style_control(report)
    assert page is not None
    assert page["lines"][-1] == (
        "In the table, strengths are log-odds with the mean of the candidates with a strength at 0."
    )
    rows = {row[0]: row for row in page["rows"]}
    assert rows["delta's strength, style held equal"][1] == "not estimable"
    assert "extrapolate" in rows["delta's strength, style held equal"][4]
    assert verify_reports(run).differences == []
