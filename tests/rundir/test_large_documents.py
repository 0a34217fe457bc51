"""A large document names its first misfit as a full walk of the schema names it (the pointer
into the entry as it is), list lengths keep their bounds, and bt-verify reads each input once."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema.exceptions import best_match

from blindtest.errors import BadInput
from blindtest.rundir import artifacts
from blindtest.rundir.artifacts.validation import _pointer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "run"


def _big_design(trials: int = 1_000) -> dict[str, Any]:
    design: dict[str, Any] = orjson.loads((EXAMPLE / artifacts.DESIGN).read_bytes())
    prompt, entry = design["prompts"][0], design["arrangement"][0]
    design["prompts"] = [prompt | {"id": f"p{i}"} for i in range(trials)]
    design["arrangement"] = [
        entry | {"trial": i + 1, "prompt_id": f"p{i}", "odd_position": 1 + i % 3}
        for i in range(trials)
    ]
    design["trials"] = trials
    return design


def _full_walk_message(record: dict[str, Any], name: str) -> str:
    error = best_match(artifacts.validator(name).iter_errors(record))
    assert error is not None
    return f"{name}: {_pointer(error)}: {error.message}"


@pytest.mark.parametrize(
    ("where", "change"),
    [
        ("arrangement", lambda e: e | {"trial": 0}),
        ("arrangement", lambda e: e | {"odd_position": 4}),
        ("arrangement", lambda e: {k: v for k, v in e.items() if k != "prompt_id"}),
        ("prompts", lambda p: p | {"sha256": "not hex"}),
        ("prompts", lambda p: p | {"text": 5}),
    ],
)
def test_one_bad_entry_deep_in_a_large_design_is_named_as_a_full_walk_names_it(
    where: str, change: Any
) -> None:
    artifacts.validate(_big_design(), "design", "design")  # its shape is known valid
    design = _big_design()
    design[where][718] = change(design[where][718])
    with pytest.raises(BadInput) as caught:
        artifacts.validate(design, "design", "design")
    assert str(caught.value) == _full_walk_message(design, "design")
    assert f"/{where}/718" in str(caught.value)


def _trial(options: int) -> dict[str, Any]:
    return {
        "schema": "blindtest/trials@1",
        "trial": 1,
        "prompt": "p",
        "options": [f"option {i}" for i in range(options)],
    }


def test_list_lengths_keep_their_bounds() -> None:
    for valid in (2, 3):
        artifacts.validate(_trial(valid), "trials", "trials.jsonl")
    for invalid in (0, 1, 4, 40):  # minItems 2, maxItems 3, with the same item shapes
        with pytest.raises(BadInput, match="/options"):
            artifacts.validate(_trial(invalid), "trials", "trials.jsonl")
    design = _big_design(5)
    empty = copy.deepcopy(design) | {"prompts": []}
    with pytest.raises(BadInput, match="/prompts"):
        artifacts.validate(empty, "design", "design")


def test_reading_once_shares_an_unchanged_file_and_rereads_a_changed_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / artifacts.TRIALS
    path.write_bytes(artifacts.dump_line(_trial(3)))
    outside = artifacts.read_jsonl(path, "trials")
    assert artifacts.read_jsonl(path, "trials") is not outside
    with artifacts.reading_once():
        first = artifacts.read_jsonl(path, "trials")
        assert artifacts.read_jsonl(path, "trials") is first
        with path.open("ab") as handle:
            handle.write(artifacts.dump_line(_trial(2) | {"trial": 2}))
        again = artifacts.read_jsonl(path, "trials")
        assert again is not first
        assert len(again.records) == 2
    assert artifacts.read_jsonl(path, "trials") is not again
