"""bt-design --decide: the decision recorded in the hashed design, the planted comparisons of
the sensitivity check in the arrangement, and the refusals (exit 2, one line, nothing
written)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.designing.build import build_arrangement, build_candidate_arrangement
from blindtest.model.planted import DEGRADATIONS, DEGRADE_VERSION
from blindtest.model.slots import plan_slots
from blindtest.rundir import artifacts

from conftest import Invoke, files_in, numbered_prompts

MakeFile = Callable[..., Path]
MODELS = ("--a", "model-a", "--b", "model-b", "--protocol", "preference", "--seed", "gate")


def design_of(run: Path) -> dict[str, Any]:
    document: dict[str, Any] = orjson.loads((run / "design.json").read_bytes())
    return document


def refused(result: Any, run: Path, *parts: str) -> None:
    assert result.exit_code == 2, result.stdout
    assert result.stderr.count("\n") == 1, result.stderr
    for part in parts:
        assert part in result.stderr, result.stderr
    assert files_in(run) == []


def test_a_design_without_decide_has_no_decision_and_hashes_as_before(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    prompts = prompts_file(numbered_prompts(30))
    made = invoke("design", tmp_path / "r", "--prompts", prompts, *MODELS, "--quiet")
    assert made.exit_code == 0, made.stderr
    design = design_of(tmp_path / "r")
    assert "decision" not in design
    assert not any("planted" in e for e in design["arrangement"])


def test_the_decision_is_recorded_in_the_hashed_design(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    prompts = prompts_file(numbered_prompts(40))
    run = tmp_path / "r"
    made = invoke(
        "design", run, "--prompts", prompts, *MODELS, "--trials", "20",
        "--decide", "noninferior:0.05", "--sensitivity", "8", "--plan-ties", "0.3", "--quiet",
    )  # fmt: skip
    assert made.exit_code == 0, made.stderr
    design = design_of(run)
    assert design["decision"] == {
        "rule": "noninferior",
        "margin": 0.05,
        "alpha": 0.05,
        "estimand": "untied-share",
        "champion": "A",
        "planning": {"true": 0.5, "ties": 0.3, "power": 0.8},
        "sensitivity": {"comparisons": 8, "version": DEGRADE_VERSION},
        "sequential": False,
    }
    assert design["trials"] == 28
    recorded = (run / "design.sha256").read_text().split()[0]
    assert recorded == artifacts.sha256_bytes((run / "design.json").read_bytes())


def test_planted_comparisons_show_the_champion_on_prompts_of_their_own(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    prompts = prompts_file(numbered_prompts(60))
    run = tmp_path / "r"
    made = invoke(
        "design", run, "--prompts", prompts, *MODELS, "--trials", "30", "--controls", "4",
        "--decide", "equivalent:0.1", "--champion", "model-b", "--sensitivity", "12", "--quiet",
    )  # fmt: skip
    assert made.exit_code == 0, made.stderr
    design = design_of(run)
    planted = [e for e in design["arrangement"] if "planted" in e]
    assert len(planted) == 12
    assert all(e["planted"]["side"] == "B" and e["left"] == "B" for e in planted)
    assert {e["planted"]["degradation"] for e in planted} <= set(DEGRADATIONS)
    assert Counter(e["planted"]["original"] for e in planted) == {1: 6, 2: 6}
    prompt_ids = [e["prompt_id"] for e in design["arrangement"]]
    assert len(set(prompt_ids)) == len(prompt_ids) == 30 + 4 + 12
    real = [e for e in design["arrangement"] if "planted" not in e and "control" not in e]
    assert Counter(e["left"] for e in real) == {"A": 15, "B": 15}
    # One slot per planted comparison: its copy is made, never fetched.
    slots = [s for s in plan_slots(design) if s.trial in {e["trial"] for e in planted}]  # type: ignore[arg-type]
    assert [(s.slot, s.side) for s in slots] == [(e["planted"]["original"], "B") for e in planted]


def test_the_arrangement_with_planted_comparisons_is_rederived_from_the_seed(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    prompts = prompts_file(numbered_prompts(40))
    run = tmp_path / "r"
    made = invoke(
        "design", run, "--prompts", prompts, *MODELS, "--trials", "20",
        "--decide", "noninferior:0.05", "--sensitivity", "6", "--quiet",
    )  # fmt: skip
    assert made.exit_code == 0, made.stderr
    design = design_of(run)
    ids = [p["id"] for p in design["prompts"]]
    assert design["arrangement"] == build_arrangement("gate", 26, ids, "preference", 0, 6, "A")
    without = build_arrangement("gate", 26, ids, "preference")
    assert [e["prompt_id"] for e in without] == [e["prompt_id"] for e in design["arrangement"]]
    verified = invoke("verify", run)
    assert "arrangement from the seed" in verified.stdout


def test_with_a_reference_the_reference_is_the_champion_and_planted_prompts_leave_the_schedule(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    prompts = prompts_file(numbered_prompts(12))
    run = tmp_path / "r"
    made = invoke(
        "design", run, "--prompts", prompts, "--candidate", "big=m1", "--candidate",
        "small=m2", "--candidate", "mid=m3", "--pairs", "reference:big", "--seed", "gate",
        "--decide", "noninferior:0.05", "--sensitivity", "4", "--quiet",
    )  # fmt: skip
    assert made.exit_code == 0, made.stderr
    design = design_of(run)
    assert design["decision"]["champion"] == "big"
    planted = [e for e in design["arrangement"] if "planted" in e]
    assert [(e["left"], e["right"]) for e in planted] == [("big", "big")] * 4
    planted_prompts = {e["prompt_id"] for e in planted}
    real = [e for e in design["arrangement"] if "planted" not in e]
    assert not planted_prompts & {e["prompt_id"] for e in real}
    assert len(real) == 8 * 2  # 8 prompts left, each challenger against big once
    assert design["trials"] == len(design["arrangement"]) == 20
    ids = [p["id"] for p in design["prompts"]]
    names = ["big", "small", "mid"]
    assert design["arrangement"] == build_candidate_arrangement(
        "gate", names, ids, "reference:big", 16, 4, "big"
    )
    # The owner of each planted answer is its own comparison's slot 1: one answer, one fetch.
    slots = {(s.trial, s.slot) for s in plan_slots(design)}  # type: ignore[arg-type]
    for entry in planted:
        assert (entry["trial"], 1) in slots
        assert (entry["trial"], 2) not in slots


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--sensitivity", "5"), "--sensitivity goes with --decide RULE"),
        (("--champion", "B"), "--champion goes with --decide RULE"),
        (("--estimand", "mean-score"), "--estimand goes with --decide RULE"),
        (("--decide", "similar:0.3"), "similar:PD0 is for the triangle and pair protocols"),
        (("--decide", "noninferior"), "noninferior needs a margin"),
        (("--decide", "noninferior:0.7"), "--decide noninferior:0.7: margin must be"),
        (("--decide", "better:0.1"), "--decide better:0.1: rule must be one of"),
        (("--decide", "superior", "--champion", "C"), "--champion C: no side of that name"),
        (("--decide", "noninferior:0.05", "--plan-true", "1.5"), "--plan-true must be in [0, 1]"),
        (("--decide", "noninferior:0.05", "--sensitivity", "30"), "need 20 + 30 planted"),
        (("--decide", "noninferior:0.05", "--alpha", "0.5"), "--alpha must be below 0.5"),
    ],
)
def test_decision_refusals_exit_2_and_write_nothing(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile, extra: tuple[str, ...], message: str
) -> None:
    prompts = prompts_file(numbered_prompts(40))
    run = tmp_path / "r"
    result = invoke("design", run, "--prompts", prompts, *MODELS, "--trials", "20", *extra)
    refused(result, run, message)


@pytest.mark.parametrize(
    ("protocol", "extra", "message"),
    [
        ("triangle", ("--decide", "noninferior:0.05"), "needs --protocol preference"),
        ("pair", ("--decide", "similar:0.3", "--sensitivity", "4"), "drop --sensitivity"),
        ("pair", ("--decide", "similar:0.3", "--similarity", "0.3"), "drop --similarity"),
    ],
)
def test_similarity_decisions_are_for_triangle_and_pair(
    invoke: Invoke,
    tmp_path: Path,
    prompts_file: MakeFile,
    protocol: str,
    extra: tuple[str, ...],
    message: str,
) -> None:
    prompts = prompts_file(numbered_prompts(40))
    run = tmp_path / "r"
    result = invoke(
        "design", run, "--prompts", prompts, "--a", "m1", "--b", "m2", "--protocol", protocol,
        "--seed", "s", *extra,
    )  # fmt: skip
    refused(result, run, message)


def test_a_similar_decision_on_a_triangle_design(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    prompts = prompts_file(numbered_prompts(30))
    run = tmp_path / "r"
    made = invoke(
        "design", run, "--prompts", prompts, "--a", "m1", "--b", "m2", "--protocol", "triangle",
        "--seed", "s", "--decide", "similar:0.3", "--quiet",
    )  # fmt: skip
    assert made.exit_code == 0, made.stderr
    decision = design_of(run)["decision"]
    assert (decision["rule"], decision["margin"], decision["estimand"]) == ("similar", 0.3, "pd")
    assert decision["sensitivity"] is None


def test_sequential_with_a_preference_decision_is_the_decisions_not_the_triangles(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    prompts = prompts_file(numbered_prompts(30))
    run = tmp_path / "r"
    made = invoke(
        "design", run, "--prompts", prompts, *MODELS, "--decide", "superior", "--sequential",
        "--quiet",
    )  # fmt: skip
    assert made.exit_code == 0, made.stderr
    design = design_of(run)
    assert design["sequential"] is False
    assert design["decision"]["sequential"] is True
    assert design["decision"]["planning"]["true"] == 0.6


def test_bt_design_says_the_decisions_power_and_the_n_that_reaches_the_planned_power(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    from blindtest.stats.sizing import decision_sample_size

    prompts = prompts_file(numbered_prompts(40))
    made = invoke(
        "design", tmp_path / "r", "--prompts", prompts, *MODELS, "--trials", "20",
        "--decide", "noninferior:0.05", "--plan-ties", "0.3",
    )  # fmt: skip
    assert made.exit_code == 0, made.stderr
    said = " ".join(made.stderr.split())
    planned = decision_sample_size("noninferior", 0.05, true=0.5, ties=0.3, power=0.8)
    assert "decision noninferior:0.05 against the champion A" in said
    assert "no sensitivity check, so a non-inferiority or equivalence claim will not" in said
    assert f"{planned.smallest_n:,} reach power 0.8" in said
