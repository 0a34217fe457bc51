"""non-finite or negative prices, and a nan or infinite --timeout
or --rpm, are bad input (exit 2) refused before anything is created."""

from __future__ import annotations

from pathlib import Path

import pytest

from blindtest.simulator import Simulator

from conftest import Invoke, files_in
from generate_runs import make_design


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--price-a", "nan,inf", "--price-a: expected IN,OUT dollars per million tokens"),
        ("--price-a", "inf,1", "--price-a: expected IN,OUT dollars per million tokens"),
        ("--price-b", "1,-2", "--price-b: expected IN,OUT dollars per million tokens"),
        ("--price-launder", "nan,1", "--price-launder: expected IN,OUT"),
        ("--timeout", "nan", "--timeout: expected a finite number of seconds > 0, got nan"),
        ("--timeout", "inf", "--timeout: expected a finite number of seconds > 0, got inf"),
        ("--rpm", "inf", "--rpm: expected a finite number of requests per minute > 0, got inf"),
        ("--rpm", "nan", "--rpm: expected a finite number of requests per minute > 0, got nan"),
    ],
)
def test_non_finite_options_are_exit_2_before_anything_is_created(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, option: str, value: str, message: str
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path)
    before = files_in(run)
    result = invoke("generate", run, option, value)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.count("\n") == 1
    assert files_in(run) == before  # no empty responses.jsonl, no generation.json
    assert simulator.requests == []
