"""bt-design --people-sample N: the prompts people judge are drawn from the design seed before
any call, recorded in the hashed design, and re-drawn by bt-verify."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from blindtest.model.people_sample import allocate, draw_people_sample, people_trials
from blindtest.rundir import artifacts

from conftest import Invoke


def _prompts(path: Path, count: int = 20, tags: tuple[str, ...] = ()) -> Path:
    rows = []
    for i in range(count):
        row: dict[str, object] = {"prompt": f"Question {i}?", "id": f"q{i:02d}"}
        if tags:
            row["tags"] = [tags[i % len(tags)]]
        rows.append(json.dumps(row))
    path.write_text("\n".join(rows) + "\n")
    return path


def _design(invoke: Invoke, run: Path, prompts: Path, *extra: object) -> dict[str, object]:
    made = invoke(
        "design", run, "--prompts", prompts, "--protocol", "preference", "--trials", 20,
        "--seed", "s", "--a", "m1", "--b", "m2", *extra,
    )  # fmt: skip
    assert made.exit_code == 0, made.stderr
    design: dict[str, object] = json.loads((run / artifacts.DESIGN).read_text())
    return design


def test_the_sample_is_drawn_from_the_seed_and_recorded_in_the_hashed_design(
    invoke: Invoke, tmp_path: Path
) -> None:
    prompts = _prompts(tmp_path / "p.jsonl")
    first = _design(invoke, tmp_path / "one", prompts, "--people-sample", 6)
    again = _design(invoke, tmp_path / "two", prompts, "--people-sample", 6)
    record = first["people_sample"]
    assert record == again["people_sample"]
    assert record == {
        "version": "blindtest/people-sample@1", "size": 6, "by": "uniform",
        "judge_prediction": "verdict", "missing": "void",
        "prompts": record["prompts"],  # type: ignore[index]
    }  # fmt: skip
    assert len(set(record["prompts"])) == 6
    assert len(people_trials(first) or ()) == 6
    without = _design(invoke, tmp_path / "three", prompts)
    assert "people_sample" not in without


def test_a_sample_by_tag_gives_every_tag_at_least_two_prompts() -> None:
    shares = allocate(8, [12, 6, 2])
    assert sum(shares) == 8
    assert min(shares) >= 2
    prompts = [{"id": f"q{i}", "tags": ["a" if i < 12 else "b"]} for i in range(16)]
    drawn = draw_people_sample("s", prompts, 6, "tag")
    tags = Counter("a" if int(p[1:]) < 12 else "b" for p in drawn["prompts"])
    assert tags["b"] >= 2
    assert sum(tags.values()) == 6


def test_a_sample_is_refused_where_it_cannot_be_estimated(invoke: Invoke, tmp_path: Path) -> None:
    prompts = _prompts(tmp_path / "p.jsonl")
    triangle = invoke(
        "design", tmp_path / "t", "--prompts", prompts, "--protocol", "triangle", "--trials", 20,
        "--a", "m1", "--b", "m2", "--people-sample", 5,
    )  # fmt: skip
    assert triangle.exit_code == 2
    assert "--people-sample estimates what people prefer: use --protocol preference" in (
        triangle.stderr
    )
    whole = invoke(
        "design", tmp_path / "w", "--prompts", prompts, "--protocol", "preference",
        "--trials", 20, "--a", "m1", "--b", "m2", "--people-sample", 20,
    )  # fmt: skip
    assert whole.exit_code == 2
    assert "--people-sample 20: give 2 to 19" in whole.stderr
    assert not (tmp_path / "w" / artifacts.DESIGN).exists()


def test_bt_verify_redraws_the_sample_and_names_a_changed_one(
    invoke: Invoke, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    design = _design(invoke, run, _prompts(tmp_path / "p.jsonl"), "--people-sample", 6)
    record = design["people_sample"]
    chosen = set(record["prompts"])  # type: ignore[index]
    other = next(f"q{i:02d}" for i in range(20) if f"q{i:02d}" not in chosen)
    record["prompts"][0] = other  # type: ignore[index]
    artifacts.write_design(run, design, force=True)
    verified = invoke("verify", run)
    assert verified.exit_code == 1
    assert "design.json/people_sample" in verified.stdout + verified.stderr


def test_a_decision_beside_a_sample_is_on_the_people_estimate(
    invoke: Invoke, tmp_path: Path
) -> None:
    made = invoke(
        "design", tmp_path / "d", "--prompts", _prompts(tmp_path / "p.jsonl"), "--protocol",
        "preference", "--trials", 20, "--a", "m1", "--b", "m2", "--people-sample", 5,
        "--decide", "noninferior:0.05",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    decision = json.loads((tmp_path / "d" / artifacts.DESIGN).read_text())["decision"]
    assert decision["estimand"] == "people-mean-score"
    assert decision["sensitivity"] is None
    said = " ".join(made.stderr.split())
    assert "on the people's prediction-powered estimate of their mean score" in said
    assert "no sensitivity check: the estimate is valid whatever the LLM judge does" in said


def test_a_decision_on_the_people_estimate_refuses_what_belongs_to_the_judge(
    invoke: Invoke, tmp_path: Path
) -> None:
    prompts = _prompts(tmp_path / "p.jsonl", count=30)
    for extra, words in (
        (("--sensitivity", 5), "--sensitivity checks the LLM judge; with --people-sample"),
        (("--estimand", "untied-share"), "--estimand untied-share: with --people-sample"),
        (("--sequential",), "--sequential with --people-sample"),
    ):
        refused = invoke(
            "design", tmp_path / "d", "--prompts", prompts, "--protocol", "preference",
            "--trials", 20, "--a", "m1", "--b", "m2", "--people-sample", 5,
            "--decide", "noninferior:0.05", *extra,
        )  # fmt: skip
        assert refused.exit_code == 2, refused.output
        assert words in refused.stderr
        assert not (tmp_path / "d" / artifacts.DESIGN).exists()


def test_a_decision_on_the_people_estimate_refuses_planning_values_it_would_not_use(
    invoke: Invoke, tmp_path: Path
) -> None:
    """What would settle a people's decision is planned at the values the run observes, so
    --plan-true and --plan-ties would be recorded and never read: refused in one line."""
    prompts = _prompts(tmp_path / "p.jsonl", count=30)
    for extra in (("--plan-true", 0.6), ("--plan-ties", 0.2)):
        refused = invoke(
            "design", tmp_path / "d", "--prompts", prompts, "--protocol", "preference",
            "--trials", 20, "--a", "m1", "--b", "m2", "--people-sample", 5,
            "--decide", "noninferior:0.05", *extra,
        )  # fmt: skip
        assert refused.exit_code == 2, refused.output
        (line,) = refused.stderr.strip().splitlines()
        assert f"{extra[0]} plans the comparisons that would settle a decision on the judges'" in (
            line
        )
        assert "bt-plan --people-sample TOTAL --agreement SHARE" in line
        assert line.endswith(f"drop {extra[0]}")
        assert not (tmp_path / "d" / artifacts.DESIGN).exists()
