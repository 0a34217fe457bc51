"""(small things) owned by bt-design, bt-plan and the umbrella help."""

from __future__ import annotations

from pathlib import Path

import pytest

from blindtest.planning.rows import weak_design_note
from blindtest.stats.power import power_row

from conftest import Invoke


def test_weak_design_gets_one_power_line(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("design", tmp_path / "run", "--demo", "--protocol", "pair", "--trials", "8")
    assert result.exit_code == 0, result.stderr
    power = power_row(8, protocol="pair", pcs=[0.7]).power[0.7]
    assert power < 0.5
    lines = result.stderr.splitlines()
    assert (
        "with 8 trials this design detects a judge right 70% of the time only 6 times in 100; "
        "49 trials reach 80% and every count from 54 on stays there (bt-plan shows more)"
    ) in lines
    assert power_row(49, protocol="pair", pcs=[0.7]).power[0.7] >= 0.8
    assert power_row(48, protocol="pair", pcs=[0.7]).power[0.7] < 0.8


def test_preference_line_speaks_of_a_win_rate(invoke: Invoke, tmp_path: Path) -> None:
    args = ("--protocol", "preference", "--trials", "12")
    result = invoke("design", tmp_path / "run", "--demo", *args)
    assert "this design finds a side preferred 70% of the time only 25 times in 100" in (
        result.stderr
    )


def test_a_design_with_enough_power_prints_no_power_line(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("design", tmp_path / "run", "--demo", "--trials", "20")
    assert power_row(20, pcs=[0.7]).power[0.7] >= 0.5
    assert "this design detects" not in result.stderr


@pytest.mark.parametrize(
    ("protocol", "trials", "expected"),
    [
        ("triangle", 1, "with 1 trial this design can never detect a judge right 70% of the time"),
        (
            "triangle",
            6,
            "with 6 trials this design detects a judge right 70% of the time only 42 times in 100; "
            "13 trials reach 80%",
        ),
        ("pair", 40, None),
    ],
)
def test_weak_design_note_wording(protocol: str, trials: int, expected: str | None) -> None:
    note = weak_design_note(protocol, trials, 0.05)
    if expected is None:
        assert note is None
    else:
        assert note is not None
        assert note.startswith(expected)


def test_protocol_has_help_text(invoke: Invoke) -> None:
    for command in ("design", "plan"):
        text = " ".join(invoke(command, "-h").stdout.split())
        assert "--protocol [triangle|pair|preference] triangle:" in text


def test_blindtest_help_lists_stages_in_pipeline_order_with_whole_descriptions(
    invoke: Invoke,
) -> None:
    result = invoke("--help", env={"COLUMNS": "200"})
    assert result.exit_code == 0
    commands = result.stdout.split("Commands:")[1].splitlines()
    names = [line.split()[0] for line in commands if line[:3].strip() and line.strip()]
    assert names == ["design", "generate", "judge", "audit", "analyze", "verify", "plan", "run"]
    assert "..." not in result.stdout.split("Commands:")[1]
    words = " ".join(result.stdout.split())
    assert (
        "verify Recompute hashes, arrangement, answer texts, blinded view, audit and report; list"
        " any difference."
    ) in words


def test_blindtest_help_wraps_descriptions_at_80_columns(invoke: Invoke) -> None:
    result = invoke("--help", env={"COLUMNS": "80"})
    assert all(len(line) <= 80 for line in result.stdout.splitlines())
    assert "..." not in result.stdout.split("Commands:")[1]
    words = " ".join(result.stdout.split())
    assert (
        "generate Fetch every response before any judging; a rerun fetches only what is missing."
        in (words)
    )
