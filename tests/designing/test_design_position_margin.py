"""bt-design --position-margin M: the position gate's margin fixed in the hashed design before
any pick; a design without it has no such field, so its bytes and hash are what they were."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from conftest import Invoke, numbered_prompts

MakeFile = Callable[..., Path]
MODELS = ("--a", "model-a", "--b", "model-b", "--protocol", "preference", "--seed", "margin")


def _design(run: Path) -> tuple[dict[str, Any], bytes]:
    data = (run / "design.json").read_bytes()
    document: dict[str, Any] = orjson.loads(data)
    return document, data


def test_a_position_margin_is_recorded_only_when_given_and_leaves_the_rest_unchanged(
    invoke: Invoke, tmp_path: Path, prompts_file: MakeFile
) -> None:
    prompts = prompts_file(numbered_prompts(30))
    plain = invoke("design", tmp_path / "plain", "--prompts", prompts, *MODELS, "--quiet")
    fixed = invoke(
        "design", tmp_path / "fixed", "--prompts", prompts, *MODELS, "--position-margin", "0.08",
        "--quiet",
    )  # fmt: skip
    assert plain.exit_code == 0, plain.stderr
    assert fixed.exit_code == 0, fixed.stderr
    without, data = _design(tmp_path / "plain")
    recorded, _ = _design(tmp_path / "fixed")
    assert "position_margin" not in without
    assert recorded.pop("position_margin") == 0.08
    assert recorded == without  # nothing else moved
    # The hash is over the exact bytes, and those are the bytes the design had before the field.
    stored = (tmp_path / "plain" / "design.sha256").read_text().split()[0]
    assert stored == hashlib.sha256(data).hexdigest()
    assert b"position_margin" not in data
