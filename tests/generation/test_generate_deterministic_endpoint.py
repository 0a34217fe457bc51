"""the deterministic-endpoint stop counts over all fetched trials; a
deterministic endpoint (identical same-model draws on nearly every trial) is told from short
answers colliding by chance (some trials): the second is not stopped, its collision count is
printed with what the duplicate spotter will make of it; one coincidence in a small design
never trips the stop; the guard costs O(1) per response."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

import blindtest.generation.guard as guard
from blindtest.generation.guard import DrawCollisions
from blindtest.model.slots import SlotState
from blindtest.rundir.types import DesignRecord
from blindtest.simulator import Simulator

from conftest import Invoke
from generate_runs import make_design, rows


def triangle(trials: int) -> DesignRecord:
    return {  # type: ignore[typeddict-item]  # only what the guard reads
        "protocol": "triangle",
        "arrangement": [
            {"trial": t, "prompt_id": f"p{t}", "doubled": "A", "odd_position": 3}
            for t in range(1, trials + 1)
        ],
    }


def state_with(trials: int, identical: int, words: int = 1, canned: bool = False) -> SlotState:
    """Every trial's twins (slots 1 and 2) fetched; the first ``identical`` are the same
    answer of ``words`` words, each prompt's own (``canned``: one text for every prompt)."""
    rows = []
    for t in range(1, trials + 1):
        same = " ".join(["same"] * words if canned else [f"same{t}"] * words)
        twin = same if t <= identical else f"one {t}"
        rows += [
            {"trial": t, "slot": 1, "side": "A", "status": "ok", "text": same},
            {"trial": t, "slot": 2, "side": "A", "status": "ok", "text": twin},
            {"trial": t, "slot": 3, "side": "B", "status": "ok", "text": "odd"},
        ]
    return SlotState.from_rows(rows)


@pytest.mark.parametrize(
    ("trials", "identical", "words", "deterministic"),
    [
        (3, 1, 80, False),  # one coincidence in a design under 10 trials
        (9, 1, 80, False),
        (4, 4, 1, False),  # one-word answers say nothing, however many collide
        (20, 20, 1, False),
        (20, 20, 3, False),  # 3-word answers: 20 pairs are not enough (41 would be)
        (20, 20, 5, True),  # a 5-word sentence on every one of 20 pairs is not chance
        (6, 2, 80, False),  # two long ones among six: prompts with one right wording
        (6, 5, 80, True),
        (6, 6, 80, True),
        (20, 8, 3, False),  # short answers: 8 of 20 collide (seen on llama.cpp, 10.22)
        (20, 18, 12, True),  # 18 of 20 at a dozen words each is not chance
        (20, 20, 80, True),
    ],
)
def test_deterministic_means_identical_answers_too_long_and_many_for_chance(
    trials: int, identical: int, words: int, deterministic: bool
) -> None:
    collisions = DrawCollisions.for_design(triangle(trials), state_with(trials, identical, words))
    assert (collisions.pairs, collisions.identical) == (trials, identical)
    assert collisions.deterministic() is deterministic
    assert collisions.refused() is deterministic


@pytest.mark.parametrize("words", [2, 5, 80])
def test_one_text_for_every_prompt_fires_the_prompt_independence_count_not_the_determinism_test(
    words: int,
) -> None:
    # A gateway's canned sentence repeats at any temperature: no evidence of determinism, a
    # count of its own; each check says that it fired.
    collisions = DrawCollisions.for_design(triangle(10), state_with(10, 10, words, canned=True))
    assert not collisions.deterministic()
    assert collisions.fired("prompt_independent") == ["A"]
    assert collisions.refused()


def test_one_word_for_every_prompt_fires_neither_check() -> None:
    # "Yes" to every prompt: a yes/no workload, not a canned gateway.
    collisions = DrawCollisions.for_design(triangle(20), state_with(20, 20, 1, canned=True))
    assert not collisions.refused()


def test_the_guard_compares_each_trial_once_not_every_trial_per_response(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real = guard._same

    def counting(first: str, second: str) -> bool:
        calls.append(1)
        return real(first, second)

    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=20)
    monkeypatch.setattr(guard, "_same", counting)
    assert invoke("generate", run, "--quiet").exit_code == 0
    # 20 trials: one comparison each while fetching (60 responses), then one pass each for
    # generation.json, the final check and the notice; never one scan per response (1200+).
    assert len(calls) <= 20 * 4


def test_short_answers_colliding_by_chance_are_counted_not_stopped(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--max-tokens", "1", trials=20)
    result = invoke("generate", run)
    assert result.exit_code == 0, result.stderr
    design = orjson.loads((run / "design.json").read_bytes())
    collisions = DrawCollisions.for_design(design, SlotState.from_rows(rows(run)))
    assert 0 < collisions.identical < 18  # some, not nearly all
    notice = next(line for line in result.stderr.splitlines() if line.startswith("note: "))
    assert notice.startswith(
        f"note: {collisions.identical} of all 20 triangle trials got two identical answers "
        "from the same model (short answers collide by chance)"
    )
    assert "bt-audit's duplicate spotter will do so and report it as a tell" in notice
    assert "deterministic" not in result.stderr
    assert (run / "trials.jsonl").exists()


def test_deterministic_stop_states_the_count_over_all_fetched_trials(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    simulator.config.deterministic = True  # a server that ignores temperature
    run = tmp_path / "run"
    design = make_design(invoke, run, simulator, tmp_path, trials=20)
    result = invoke("generate", run, "--quiet")
    assert result.exit_code == 1
    collisions = DrawCollisions.for_design(design, SlotState.from_rows(rows(run)))
    found = re.search(
        r"error: (\d+) (of all 20|of the (\d+) triangle trials fetched)", result.stderr
    )
    assert found is not None, result.stderr
    assert int(found.group(1)) == collisions.identical
    if found.group(3) is not None:
        assert int(found.group(3)) == collisions.pairs
    assert re.search(
        r"the determinism check fired .*, so the endpoints? (is|are) deterministic "
        r"\(temperature ignored or 0, or a cache\)",
        result.stderr,
    )
    assert "prompt-independence" not in result.stderr
    assert not (run / "trials.jsonl").exists()
    # the rerun says the same count, and asks for nothing more
    before = len(simulator.requests)
    again = invoke("generate", run, "--quiet")
    assert again.exit_code == 1
    assert again.stderr == result.stderr
    assert len(simulator.requests) == before
    loud = invoke("generate", run)
    assert "fetching" not in loud.stderr
    assert loud.stderr.splitlines()[-1] == result.stderr.splitlines()[-1]


def test_a_stop_after_every_slot_is_fetched_says_all_of_them(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    simulator.config.deterministic = True
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=6)
    result = invoke("generate", run, "--quiet")
    assert result.exit_code == 1
    assert "error: 6 of all 6 triangle trials got two identical answers" in result.stderr


def test_a_design_of_four_trials_with_long_identical_answers_is_stopped(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    simulator.config.deterministic = True
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=4)
    result = invoke("generate", run)
    assert result.exit_code == 1, result.stderr
    assert "error: 4 of all 4 triangle trials got two identical answers" in result.stderr
    assert not (run / "trials.jsonl").exists()


_QUOTED_ON_A_TIE = """
from blindtest.generation.guard import DrawCollisions
from blindtest.model.slots import SlotState
rows = []
for t in range(1, 7):  # side A answers one sentence to prompts 1-3, another to 4-6: a tie
    text = "I cannot help with that." if t <= 3 else "Please try again later now."
    rows += [{"trial": t, "slot": s, "side": "A", "status": "ok", "text": text} for s in (1, 2)]
    rows.append({"trial": t, "slot": 3, "side": "B", "status": "ok", "text": f"odd {t}"})
design = {"protocol": "triangle", "arrangement": [
    {"trial": t, "prompt_id": f"p{t}", "doubled": "A", "odd_position": 3} for t in range(1, 7)
]}
print(DrawCollisions.for_design(design, SlotState.from_rows(rows)).sides["A"].common_text)
"""


def test_the_text_quoted_among_equally_common_answers_is_the_same_in_every_process() -> None:
    # Each process salts Python's string hash differently; the guard's text keys are not it.
    quoted = {
        subprocess.run(
            [sys.executable, "-c", _QUOTED_ON_A_TIE],
            env=dict(os.environ, PYTHONHASHSEED=str(seed)),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in (1, 2, 3, 4, 5, 6)
    }
    assert len(quoted) == 1, quoted
    assert quoted <= {"I cannot help with that.", "Please try again later now."}
