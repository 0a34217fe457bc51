"""Bring your own outputs: bt-design --from-dirs and bt-generate importing files."""

from __future__ import annotations

from pathlib import Path

import orjson

from blindtest.pipeline.recompute import verify_run
from blindtest.rundir import artifacts

from conftest import Invoke


def candidates(tmp_path: Path, n: int = 6, variants: bool = True) -> tuple[Path, Path]:
    a, b = tmp_path / "model-a", tmp_path / "model-b"
    a.mkdir()
    b.mkdir()
    for i in range(1, n + 1):
        if variants:
            (a / f"q{i}.md.1").write_text(f"A answers {i} at some length, with detail.\n")
            (a / f"q{i}.md.2").write_text(f"A answers {i} again, differently worded.\n")
            (b / f"q{i}.md.1").write_text(f"B: {i}.\n")
            (b / f"q{i}.md.2").write_text(f"B again: {i}.\n")
        else:
            (a / f"q{i}.md").write_text(f"A answers {i}\n")
            (b / f"q{i}.md").write_text(f"B answers {i}\n")
    return a, b


def test_items_missing_from_a_candidate_are_dropped_loudly_by_name(
    invoke: Invoke, tmp_path: Path
) -> None:
    a, b = candidates(tmp_path)
    (a / "only-in-a.md").write_text("x\n")
    result = invoke("design", tmp_path / "run", "--from-dirs", a, b, "--trials", "6", "--seed", "1")
    assert result.exit_code == 0, result.stderr
    assert "dropped 1 item(s) missing from model-b: only-in-a.md" in result.stderr
    design = orjson.loads((tmp_path / "run" / "design.json").read_bytes())
    assert design["source"]["kind"] == "dirs"
    assert design["source"]["dropped"] == {"model-b": ["only-in-a.md"]}
    assert {m["model"] for m in design["models"].values()} == {"model-a", "model-b"}
    assert set(design["source"]["files"]["q1.md"]["A"]) == {"1", "2"}


def test_triangle_without_two_outputs_per_item_is_refused_clearly(
    invoke: Invoke, tmp_path: Path
) -> None:
    a, b = candidates(tmp_path, variants=False)
    result = invoke("design", tmp_path / "run", "--from-dirs", a, b, "--trials", "6")
    assert result.exit_code == 2
    assert "the triangle needs two outputs per item" in result.stderr
    assert "use --protocol pair or preference" in result.stderr
    assert not (tmp_path / "run").exists()


def test_pair_run_imports_files_without_any_endpoint(invoke: Invoke, tmp_path: Path) -> None:
    a, b = candidates(tmp_path, variants=False)
    run = tmp_path / "run"
    assert (
        invoke(
            "design", run, "--from-dirs", a, b, "--protocol", "pair", "--trials", "6", "--seed", "2"
        ).exit_code
        == 0
    )
    result = invoke("generate", run, "--quiet")
    assert result.exit_code == 0, result.stderr
    rows = artifacts.read_jsonl(run / "responses.jsonl", "responses").records
    assert len(rows) == 12
    assert all(r["kind"] == "imported" and r["attempts"] == 0 for r in rows)
    for row in rows:
        folder = a if row["side"] == "A" else b
        assert row["text"] == (folder / row["prompt_id"]).read_text()
    assert invoke("judge", run, "--judge", "bot:length", "--quiet").exit_code == 0
    assert invoke("analyze", run, "--quiet").exit_code == 0
    assert verify_run(run).ok


def test_triangle_uses_both_variants_of_the_doubled_candidate(
    invoke: Invoke, tmp_path: Path
) -> None:
    a, b = candidates(tmp_path)
    run = tmp_path / "run"
    assert invoke("design", run, "--from-dirs", a, b, "--trials", "6", "--seed", "3").exit_code == 0
    assert invoke("generate", run, "--quiet").exit_code == 0
    design = orjson.loads((run / "design.json").read_bytes())
    trials = artifacts.read_jsonl(run / "trials.jsonl", "trials").records
    for entry, view in zip(design["arrangement"], trials, strict=True):
        folder = a if entry["doubled"] == "A" else b
        twins = [view["options"][p - 1] for p in (1, 2, 3) if p != entry["odd_position"]]
        item = entry["prompt_id"]
        assert twins == [(folder / f"{item}.1").read_text(), (folder / f"{item}.2").read_text()]


def test_a_file_changed_since_the_design_is_refused(invoke: Invoke, tmp_path: Path) -> None:
    a, b = candidates(tmp_path, variants=False)
    run = tmp_path / "run"
    assert (
        invoke(
            "design", run, "--from-dirs", a, b, "--protocol", "preference", "--trials", "6"
        ).exit_code
        == 0
    )
    (b / "q3.md").write_text("edited after the design\n")
    result = invoke("generate", run)
    assert result.exit_code == 2
    assert "changed since the design was made" in result.stderr
    assert not (run / "responses.jsonl").exists()


def test_identical_long_variants_trip_the_deterministic_guard(
    invoke: Invoke, tmp_path: Path
) -> None:
    a, b = candidates(tmp_path)
    for folder in (a, b):
        for first in folder.glob("*.1"):
            long = f"{first.name}: " + "a long answer that no sampler repeats by chance " * 6
            first.write_text(long)
            first.with_name(first.name[:-2] + ".2").write_text(long)
    run = tmp_path / "run"
    assert invoke("design", run, "--from-dirs", a, b, "--trials", "6").exit_code == 0
    result = invoke("generate", run, "--quiet")
    assert result.exit_code == 1
    assert "use --protocol pair" in result.stderr
    assert not (run / "trials.jsonl").exists()


def test_from_dirs_refuses_prompts_and_model_names(invoke: Invoke, tmp_path: Path) -> None:
    a, b = candidates(tmp_path)
    result = invoke("design", tmp_path / "run", "--from-dirs", a, b, "--a", "x")
    assert result.exit_code == 2
    assert "drop --a" in result.stderr
