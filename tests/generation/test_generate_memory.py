"""bt-generate holds a few bytes per slot, not every row.

The design's long lists are held as columns (``artifacts.load_design_lean``: the same checks
and errors as ``load_design``), answered slots are kept in a ledger of row offsets
(``generate.Ledger``), rows are read back from ``responses.jsonl`` when needed, and
``trials.jsonl`` is written one trial at a time (``artifacts.write_jsonl`` streams).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.errors import BadInput
from blindtest.model.slots import SlotState, build_trials_view
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from conftest import Invoke
from generate_runs import make_design, rows


def _as_lists(design: Any) -> dict[str, Any]:
    return {
        key: list(value) if isinstance(value, artifacts.Columns) else value
        for key, value in design.items()
    }


@pytest.mark.parametrize("protocol", ["triangle", "pair", "preference"])
def test_a_design_read_by_parts_equals_the_design_read_whole(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, protocol: str
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--protocol", protocol, trials=9)
    whole = artifacts.load_design(run)
    lean = artifacts.load_design_lean(run)
    assert isinstance(lean.design["arrangement"], artifacts.Columns)
    assert isinstance(lean.design["prompts"], artifacts.Columns)
    assert lean.sha256 == whole.sha256
    assert artifacts.dump_json(_as_lists(lean.design)) == artifacts.dump_json(whole.design)


@pytest.mark.parametrize("by_parts", [True, False])
def test_the_lean_design_shares_prompt_ids_and_can_leave_out_the_prompt_digests(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, by_parts: bool
) -> None:
    # bt-generate's read: the arrangement names each prompt by the prompts' own id string,
    # and each prompt's sha256 (checked, never read by bt-generate) is not held.
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=9)
    if not by_parts:  # laid out otherwise: read whole, then held the same way
        data = orjson.loads((run / "design.json").read_bytes())
        (run / "design.json").write_bytes(orjson.dumps(data))
        (run / "design.sha256").write_text(artifacts.sha256_bytes(orjson.dumps(data)) + "\n")
    whole = artifacts.load_design(run).design
    lean = artifacts.load_design_lean(run, prompt_digests=False).design
    prompts = [{k: v for k, v in p.items() if k != "sha256"} for p in whole["prompts"]]
    assert list(lean["prompts"]) == prompts
    assert list(lean["arrangement"]) == list(whole["arrangement"])
    ids = {p["id"]: p["id"] for p in lean["prompts"]}
    assert all(e["prompt_id"] is ids[e["prompt_id"]] for e in lean["arrangement"])
    kept = artifacts.load_design_lean(run).design
    assert [p["sha256"] for p in kept["prompts"]] == [p["sha256"] for p in whole["prompts"]]


def test_a_design_read_by_parts_is_refused_as_the_whole_one_is(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=9)
    design = orjson.loads((run / "design.json").read_bytes())
    design["arrangement"][6]["odd_position"] = 4  # only the seventh entry is wrong
    data = artifacts.dump_json(design)
    (run / "design.json").write_bytes(data)
    (run / "design.sha256").write_text(artifacts.sha256_bytes(data) + "\n")
    with pytest.raises(BadInput) as whole:
        artifacts.load_design(run)
    with pytest.raises(BadInput) as lean:
        artifacts.load_design_lean(run)
    assert str(lean.value) == str(whole.value)
    assert "/arrangement/6/odd_position" in str(lean.value)
    (run / "design.json").write_bytes(data.replace(b'"odd_position": 4', b'"odd_position": 1'))
    with pytest.raises(BadInput, match=r"no longer matches design\.sha256"):
        artifacts.load_design_lean(run)


@pytest.mark.parametrize(
    ("spoil", "pointer"),
    [
        (lambda d: d["prompts"][4].update(text=""), "/prompts/4/text"),
        (lambda d: d["arrangement"][0].update(odd_position=0), "/arrangement/0/odd_position"),
        (lambda d: d.update(protocol="tetrahedron"), "/protocol"),
    ],
)
def test_every_misfit_of_a_design_read_by_parts_is_named_as_the_whole_check_names_it(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, spoil: Any, pointer: str
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=9)
    design = orjson.loads((run / "design.json").read_bytes())
    spoil(design)
    data = artifacts.dump_json(design)
    (run / "design.json").write_bytes(data)
    (run / "design.sha256").write_text(artifacts.sha256_bytes(data) + "\n")
    with pytest.raises(BadInput) as whole:
        artifacts.load_design(run)
    with pytest.raises(BadInput) as lean:
        artifacts.load_design_lean(run)
    assert str(lean.value) == str(whole.value)
    assert f"{pointer}:" in str(lean.value)


def test_generate_writes_the_view_from_rows_read_back_by_offset(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--truncate-match", trials=12)
    assert invoke("generate", run, "--quiet").exit_code == 0
    design = artifacts.load_design(run).design
    expected = build_trials_view(design, SlotState.from_rows(rows(run)))
    assert artifacts.read_jsonl(run / "trials.jsonl", "trials").records == expected
    offsets = [offset for offset, _ in artifacts.iter_jsonl(run / "responses.jsonl", "responses")]
    with artifacts.LineReader(run / "responses.jsonl") as read:
        assert [read(offset) for offset in offsets] == rows(run)
    copy = tmp_path / "copy" / "responses.jsonl"
    with artifacts.JsonlAppender(copy, "responses", grouped=True) as out:
        assert [out.add(row) for row in rows(run)] == offsets


def test_an_invalid_record_midway_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "trials.jsonl"
    good = {"schema": "blindtest/trials@1", "trial": 1, "prompt": "p", "options": ["a", "b"]}

    def records() -> Any:
        yield good
        yield {**good, "trial": "two"}

    with pytest.raises(BadInput, match=r"trials\.jsonl:2"):
        artifacts.write_jsonl(path, records(), "trials", force=True)
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


def test_rows_are_read_back_after_a_torn_tail_was_cut(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2')  # a torn final line
    with artifacts.LineReader(path) as read:
        assert read(0) == {"a": 1}  # opened before the cut
        artifacts.repair_torn_tail(path)  # replaces the file
        with path.open("ab") as handle:
            handle.write(b'{"a": 3}\n')
        assert read(9) == {"a": 3}


def _spoiled_design(invoke: Invoke, tmp_path: Path, simulator: Simulator) -> Path:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=9)
    design = orjson.loads((run / "design.json").read_bytes())
    design["arrangement"][6]["odd_position"] = 4  # a misfit only the schema check finds
    data = artifacts.dump_json(design)
    (run / "design.json").write_bytes(data)
    (run / "design.sha256").write_text(artifacts.sha256_bytes(data) + "\n")
    return run


def test_bt_generate_refuses_a_misfit_design_in_one_line_writing_nothing(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    # As its own process: exit 2, the check's one line, nothing written, nothing sent.
    run = _spoiled_design(invoke, tmp_path, simulator)
    with pytest.raises(BadInput) as whole:
        artifacts.load_design(run)
    done = subprocess.run(
        [str(Path(sys.executable).parent / "bt-generate"), str(run), "--quiet"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "OPENAI_API_KEY": "unused"},
    )
    assert done.returncode == 2, done.stderr
    assert " ".join(done.stderr.split()) == f"bt-generate: error: {whole.value}"
    assert sorted(p.name for p in run.iterdir()) == ["design.json", "design.sha256"]
    assert not simulator.requests
