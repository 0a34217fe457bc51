"""the criteria, source material and constraints an LLM judge gets come from
the prompt records (prompt file fields ``criteria``, ``source`` or ``source_material``,
``constraints``), kept in design.json, and fill spec 003's placeholders per prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.simulator import Simulator


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDTEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def write_prompts(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


def make_run(invoke: Any, url: str, root: Path, rows: list[dict[str, Any]]) -> Path:
    run = root / "run"
    prompts = write_prompts(root / "prompts.jsonl", rows)
    made = invoke(
        "design", run, "--prompts", prompts, "--protocol", "preference", "--trials", len(rows),
        "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url", url, "--seed", "i13",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    generated = invoke("generate", run, "--quiet")
    assert generated.exit_code == 0, generated.output
    return run


def trial_of(run: Path, prompt_id: str) -> int:
    design = orjson.loads((run / "design.json").read_bytes())
    return int(next(e["trial"] for e in design["arrangement"] if e["prompt_id"] == prompt_id))


ROWS = [
    {
        "id": "sum1",
        "prompt": "Summarise the memo in one sentence.",
        "criteria": "Faithfulness to the memo above all.",
        "source": "MEMO: the office moves to Leeds in May.",
        "constraints": "One sentence at most.",
    },
    {
        "id": "sum2",
        "prompt": "Summarise the note in one sentence.",
        "criteria": "Brevity and faithfulness.",
        "source_material": "NOTE: lunch is at noon on Fridays.",
        "constraints": "No bullet points.",
    },
]


def test_prompt_fields_kept_in_design_and_shown_per_prompt(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path, ROWS)
    design = orjson.loads((run / "design.json").read_bytes())
    kept = {p["id"]: {k: p.get(k) for k in ("criteria", "source", "constraints")}
            for p in design["prompts"]}  # fmt: skip
    assert kept["sum2"]["source"] == "NOTE: lunch is at noon on Fridays."  # source_material
    assert kept["sum1"]["constraints"] == "One sentence at most."
    for row in ROWS:
        shown = invoke(
            "judge", run, "--judge", "llm:gpt-x", "--show-prompt", trial_of(run, row["id"])
        )
        assert shown.exit_code == 0, shown.output
        text = shown.stdout
        source = row.get("source", row.get("source_material"))
        assert f"## EVALUATION CRITERIA\n{row['criteria']}\n" in text
        assert f"## SOURCE MATERIAL (if applicable)\n{source}\n" in text
        assert f"## CONSTRAINTS\n{row['constraints']}" in text
        assert "None provided." not in text


def test_prompt_fields_reach_the_judge_in_every_call(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path, ROWS)
    judged = invoke("judge", run, "--judge", "llm:sim-judge-fair", "--judge-url",
                    simulator.base_url)  # fmt: skip
    assert judged.exit_code == 0, judged.output
    bodies = [orjson.loads(r.body) for r in simulator.requests]
    asked = [b["messages"][0]["content"] for b in bodies if b.get("model") == "sim-judge-fair"]
    assert len(asked) == 4  # two comparisons, both passes
    for row in ROWS:
        mine = [t for t in asked if row["prompt"] in t]
        assert len(mine) == 2
        assert all(row["criteria"] in t for t in mine)
    # the fields are side-free: nothing in a judge's prompt names a model or side
    for text in asked:
        assert "sim-large" not in text
        assert "sim-small" not in text


def test_template_uses_prompt_fields_and_falls_back_to_defaults(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    rows = [{"id": "q1", "prompt": "Name a colour.", "criteria": "Vividness."},
            {"id": "q2", "prompt": "Name a fruit.", "criteria": "Ripeness."}]  # fmt: skip
    run = make_run(invoke, simulator.base_url, tmp_path, rows)
    template = tmp_path / "t.txt"
    template.write_text(
        "By: [EVALUATION_CRITERIA]\nSource: [SOURCE_MATERIAL]\n## OUTPUT A\n[OUTPUT_A]\n"
        "## OUTPUT B\n[OUTPUT_B]\n## INPUT CONTEXT\n[INPUT_CONTEXT]\n"
    )
    shown = invoke("judge", run, "--judge", "llm:gpt-x", "--judge-template", template,
                   "--show-prompt", trial_of(run, "q2"))  # fmt: skip
    assert shown.exit_code == 0, shown.output
    assert "By: Ripeness.\nSource: None provided.\n" in shown.stdout


@pytest.mark.parametrize("show", [True, False])
def test_field_missing_for_some_prompt_exit_2_naming_it_before_any_call(
    invoke: Any, simulator: Simulator, tmp_path: Path, show: bool
) -> None:
    rows = [dict(ROWS[0]), {"id": "bare", "prompt": "Summarise nothing.", **{
        k: v for k, v in ROWS[1].items() if k in ("criteria", "constraints")}}]  # fmt: skip
    run = make_run(invoke, simulator.base_url, tmp_path, rows)
    before = len(simulator.requests)
    extra: list[Any] = ["--show-prompt", 1] if show else ["--judge-url", simulator.base_url]
    result = invoke("judge", run, "--judge", "llm:sim-judge-fair", *extra)
    assert result.exit_code == 2, result.output
    assert "prompt bare: no 'source'" in result.stderr
    assert result.stderr.count("\n") == 1
    assert len(simulator.requests) == before
    assert not (run / "picks.jsonl").exists()


def test_template_without_the_placeholder_of_a_carried_field_refused(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path, ROWS)
    template = tmp_path / "t.txt"
    template.write_text("[EVALUATION_CRITERIA]\n[CONSTRAINTS]\n[OUTPUT_A]\n[OUTPUT_B]\n"
                        "[INPUT_CONTEXT]\n")  # fmt: skip
    result = invoke("judge", run, "--judge", "llm:sim-judge-fair", "--judge-template", template,
                    "--judge-url", simulator.base_url)  # fmt: skip
    assert result.exit_code == 2
    assert "the prompts carry 'source' but the template has no [SOURCE_MATERIAL]" in result.stderr


def test_prompt_file_fields_checked(tmp_path: Path) -> None:
    from blindtest.errors import BadInput
    from blindtest.model.prompts import parse_jsonl

    with pytest.raises(BadInput, match='give "source" or "source_material"'):
        parse_jsonl('{"prompt": "x", "source": "a", "source_material": "b"}', "p.jsonl")
    with pytest.raises(BadInput, match=r'p\.jsonl:1: "criteria" must be a non-empty string'):
        parse_jsonl('{"prompt": "x", "criteria": ""}', "p.jsonl")
    (prompt,) = parse_jsonl('{"prompt": "x", "source_material": "S"}', "p.jsonl")
    assert prompt.source == "S"
    assert prompt.id == "p001"
