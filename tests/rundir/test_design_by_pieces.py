"""bt-generate reads a design's long lists a piece at a time (``load_design_lean``), and gets
exactly what the design read whole gives, or the whole design's error word for word.

Checking each piece inside the rest of the design is the check of the whole only while the
schema's rules on the arrangement and the prompts are rules on each entry: the schema test
below holds design.schema.json to that.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.errors import BadInput
from blindtest.rundir import artifacts
from blindtest.rundir.artifacts import design as design_files
from blindtest.rundir.artifacts.validation import _schema_documents
from blindtest.simulator import Simulator

from conftest import Invoke
from generate_runs import make_design

#: Keywords a rule on a whole list may use and still be a rule on each entry (with at least
#: one entry in every piece, minItems of 0 or 1 holds for the whole when it holds for each).
PER_ENTRY = {"type", "items", "minItems", "description"}
#: Keywords whose subschemas do not simply all have to hold: a rule on a list below one of
#: these could hold for every piece and fail for the whole (or the other way round).
NOT_PER_PIECE = {"not", "anyOf", "oneOf", "if", "contains", "dependentSchemas"}


def _list_rules(node: Any, above: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(keywords above, rule) for every rule the schema gives the top-level long lists."""
    if not isinstance(node, dict):
        return
    properties = node.get("properties")
    if isinstance(properties, dict):
        for key in design_files.LONG_LISTS:
            if key in properties:
                yield above, properties[key]
    for keyword in ("allOf", "anyOf", "oneOf"):
        for branch in node.get(keyword, ()):
            yield from _list_rules(branch, (*above, keyword))
    for keyword in ("if", "then", "else", "not"):
        if keyword in node:
            yield from _list_rules(node[keyword], (*above, keyword))


def test_the_design_schema_rules_on_its_long_lists_are_rules_on_each_entry() -> None:
    schema = dict(_schema_documents())["https://blindtest.invalid/schemas/design.schema.json"]
    rules = list(_list_rules(schema))
    assert len(rules) >= 4  # the lists' own rules and the protocol- and kind-dependent ones
    for above, rule in rules:
        assert not NOT_PER_PIECE & set(above), (above, rule)
        assert set(rule) <= PER_ENTRY, rule
        assert rule.get("minItems", 0) <= 1


def _as_lists(design: Any) -> dict[str, Any]:
    return {
        key: list(value) if isinstance(value, artifacts.Columns) else value
        for key, value in design.items()
    }


def _same_as_whole(run: Path) -> None:
    whole = artifacts.load_design(run)
    lean = artifacts.load_design_lean(run)
    assert lean.sha256 == whole.sha256
    assert artifacts.dump_json(_as_lists(lean.design)) == artifacts.dump_json(whole.design)


def _candidates_design(invoke: Invoke, run: Path, simulator: Simulator, tmp_path: Path) -> None:
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("".join(f"Say something about {i}.\n" for i in range(12)))
    result = invoke(
        "design", run, "--prompts", prompts, "--pairs", "all", "--seed", "pieces",
        "--url", simulator.base_url, "--candidate", "fast=sim-small",
        "--candidate", "big=sim-large", "--candidate", "mid=sim-small",
    )  # fmt: skip
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("piece_bytes", [1, 200, 1 << 20])
@pytest.mark.parametrize("kind", ["triangle", "pair", "preference", "candidates"])
def test_a_design_read_in_pieces_of_any_size_equals_it_read_whole(
    invoke: Invoke,
    tmp_path: Path,
    simulator: Simulator,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    piece_bytes: int,
) -> None:
    monkeypatch.setattr(design_files, "_PIECE_BYTES", piece_bytes)
    run = tmp_path / "run"
    if kind == "candidates":
        _candidates_design(invoke, run, simulator, tmp_path)
    else:
        make_design(invoke, run, simulator, tmp_path, "--protocol", kind, trials=12)
    assert design_files._by_pieces((run / "design.json").read_bytes()) is not None
    _same_as_whole(run)


def _rewrite(run: Path, data: bytes) -> None:
    (run / "design.json").write_bytes(data)
    (run / "design.sha256").write_text(artifacts.sha256_bytes(data) + "\n")


@pytest.mark.parametrize(
    "layout",
    [
        lambda d: orjson.dumps(d),  # on one line
        lambda d: orjson.dumps(d, option=orjson.OPT_INDENT_2),  # another writer's indentation
        lambda d: artifacts.dump_json({**d, "note": {"arrangement": []}}),  # a key named twice
    ],
)
def test_a_design_laid_out_otherwise_is_read_whole_with_the_same_result(
    invoke: Invoke,
    tmp_path: Path,
    simulator: Simulator,
    monkeypatch: pytest.MonkeyPatch,
    layout: Any,
) -> None:
    monkeypatch.setattr(design_files, "_PIECE_BYTES", 1)
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=9)
    design = orjson.loads((run / "design.json").read_bytes())
    _rewrite(run, layout(design))
    assert _outcome(artifacts.load_design_lean, run) == _outcome(artifacts.load_design, run)


def _outcome(load: Any, run: Path) -> tuple[str, bytes | str]:
    """What a design read gives: its design as `dump_json` writes it, or its error's words."""
    try:
        return "read", artifacts.dump_json(_as_lists(load(run).design))
    except BadInput as error:
        return "refused", str(error)


@pytest.mark.parametrize("entry", [0, 6, 8])
def test_a_misfit_in_any_piece_is_worded_as_the_whole_check_words_it(
    invoke: Invoke,
    tmp_path: Path,
    simulator: Simulator,
    monkeypatch: pytest.MonkeyPatch,
    entry: int,
) -> None:
    monkeypatch.setattr(design_files, "_PIECE_BYTES", 1)  # one entry a piece
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=9)
    design = orjson.loads((run / "design.json").read_bytes())
    design["arrangement"][entry]["odd_position"] = 4
    _rewrite(run, artifacts.dump_json(design))
    assert design_files._by_pieces((run / "design.json").read_bytes()) is None
    with pytest.raises(BadInput) as whole:
        artifacts.load_design(run)
    with pytest.raises(BadInput) as lean:
        artifacts.load_design_lean(run)
    assert str(lean.value) == str(whole.value)
    assert f"/arrangement/{entry}/odd_position" in str(lean.value)
