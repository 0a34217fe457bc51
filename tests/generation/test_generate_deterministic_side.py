"""The deterministic-side guard weighs identical twin draws by their length: one side that
repeats long answers is caught on a small design (half the trials double it), short answers
colliding however often never trip it, and the evidence it keeps is a test supermartingale
under its stated bound on chance repeats (checked exactly and by seeded simulation)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from blindtest.generation.guard import (
    DETERMINISTIC_MISS,
    STOP_EVIDENCE,
    DrawCollisions,
    chance_of_repeat,
    pair_evidence,
)
from blindtest.model.slots import SlotState
from blindtest.rundir.types import DesignRecord
from blindtest.simulator import Simulator

from conftest import Invoke
from generate_runs import make_design, rows


def alternating(trials: int) -> DesignRecord:
    """A triangle whose doubled side alternates A, B, A, ... (as bt-design balances it)."""
    return {  # type: ignore[typeddict-item]  # only what the guard reads
        "protocol": "triangle",
        "arrangement": [
            {"trial": t, "prompt_id": f"p{t}", "doubled": "AB"[(t - 1) % 2], "odd_position": 3}
            for t in range(1, trials + 1)
        ],
    }


def twins(trials: int, same_on: str, words: int) -> SlotState:
    """Every trial's twins fetched; the side ``same_on`` repeats a ``words``-word answer, the
    other side's twins differ."""
    out = []
    for t in range(1, trials + 1):
        doubled, other = ("A", "B") if t % 2 else ("B", "A")
        text = " ".join(f"w{t}x{i}" for i in range(words))
        second = text if doubled == same_on else f"{text} more"
        out += [
            {"trial": t, "slot": 1, "side": doubled, "status": "ok", "text": text},
            {"trial": t, "slot": 2, "side": doubled, "status": "ok", "text": second},
            {"trial": t, "slot": 3, "side": other, "status": "ok", "text": "odd"},
        ]
    return SlotState.from_rows(out)


def test_one_side_repeating_long_answers_on_half_of_ten_trials_is_deterministic() -> None:
    collisions = DrawCollisions.for_design(alternating(10), twins(10, "A", 60))
    assert (collisions.pairs, collisions.identical) == (10, 5)
    assert collisions.deterministic_sides() == ["A"]
    assert (collisions.sides["A"].identical, collisions.sides["A"].pairs) == (5, 5)
    assert collisions.sides["A"].longest == 60


def test_one_side_repeating_one_word_answers_is_not_deterministic() -> None:
    # "Yes" on every one of the side's 50 pairs: nothing a sampling endpoint would not do.
    collisions = DrawCollisions.for_design(alternating(100), twins(100, "A", 1))
    assert collisions.sides["A"].identical == 50
    assert not collisions.deterministic()


def test_the_stop_waits_for_ten_pairs_however_long_the_first_ones() -> None:
    design = alternating(20)
    state = twins(20, "A", 200)
    collisions = DrawCollisions.empty(design)
    stopped_at = None
    for key in sorted(state.generated):
        collisions.add(state, key)
        if stopped_at is None and collisions.deterministic():
            stopped_at = collisions.sides["A"].pairs
    # Ten of the side's own pairs (its 10 of the 20 trials: the 19th pair fetched).
    assert stopped_at == 10
    assert collisions.pairs == 20


def test_each_pair_factor_has_expectation_at_most_one_under_the_bound_on_chance_repeats() -> None:
    # Under H0 a second draw repeats a `words`-word answer with probability p <= q; the
    # factor's expectation is p (1 - miss) / q + (1 - p) miss, 1 - q miss at p = q (closed
    # form), and at most 1 for every p in [0, q].
    miss = DETERMINISTIC_MISS
    for words in range(0, 200):
        q = chance_of_repeat(words)
        same, differs = 10 ** pair_evidence(words), 10 ** pair_evidence(None)
        assert same == pytest.approx((1 - miss) / q, rel=1e-12)
        assert differs == pytest.approx(miss, rel=1e-12)
        for p in np.linspace(0.0, q, 11):
            assert p * same + (1 - p) * differs <= 1.0 + 1e-12
        assert q * same + (1 - q) * differs == pytest.approx(1 - q * miss, rel=1e-12)


def test_a_sampling_side_at_the_bound_crosses_a_bar_no_more_often_than_ville_allows() -> None:
    # Seeded vectorised simulation of the worst sampling side H0 allows: answer lengths
    # spread over 1..120 words, each pair repeating with probability exactly q(words). The
    # running product of factors must cross 1/a with probability at most a (Ville), for
    # every bar; the guard's own bar (STOP_EVIDENCE) is the same statement at a = 1e-6.
    rng = np.random.default_rng(20261202)
    sides, pairs = 100_000, 40
    words = rng.integers(1, 121, size=(sides, pairs))
    q = np.array([chance_of_repeat(n) for n in range(121)])
    same = np.array([pair_evidence(n) for n in range(121)])
    repeated = rng.random((sides, pairs)) < q[words]
    log_ratio = np.where(repeated, same[words], pair_evidence(None)).cumsum(axis=1)
    peak = log_ratio.max(axis=1)
    for bar in (1.0, 2.0):  # ratios of 10 and 100
        crossed = float((peak >= bar).mean())
        assert crossed <= 10.0**-bar, (bar, crossed)
    assert not (peak >= np.log10(STOP_EVIDENCE)).any()


def test_a_ten_trial_triangle_against_one_deterministic_side_is_stopped(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    simulator.config.deterministic_models = frozenset({"sim-large"})  # side A only
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=10)
    result = invoke("generate", run)
    assert result.exit_code == 1, result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert line.startswith(
        "blindtest: error: 5 of all 10 triangle trials got two identical answers from the "
        "same model: side A (sim-large) in 5 of its 5, up to "
    )
    assert "the endpoint is deterministic (temperature ignored or 0, or a cache)" in line
    assert "the run would measure that, not the models" in line
    assert "side B" not in line
    assert not (run / "trials.jsonl").exists()
    by_trial: dict[int, dict[str, list[str]]] = {}
    for row in rows(run):
        by_trial.setdefault(row["trial"], {}).setdefault(row["side"], []).append(row["text"])
    for texts in by_trial.values():  # the simulator's deterministic side repeats, B samples
        doubled = next(side for side, got in texts.items() if len(got) == 2)
        assert (texts[doubled][0] == texts[doubled][1]) is (doubled == "A")


def test_one_token_answers_that_all_collide_are_told_not_stopped(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    simulator.config.deterministic = True  # every pair collides; one token says nothing
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--max-tokens", "1", trials=20)
    result = invoke("generate", run)
    assert result.exit_code == 0, result.stderr
    assert (
        "note: 20 of all 20 triangle trials got two identical answers from the same model "
        "(every one; answers this short cannot tell a deterministic endpoint from chance)"
    ) in result.stderr
    assert (run / "trials.jsonl").exists()


def canned_b_design(invoke: Invoke, tmp_path: Path, simulator: Simulator, trials: int) -> Path:
    """A triangle design whose side B's gateway answers "I cannot help with that." to
    everything."""
    simulator.config.canned_models = frozenset({"sim-small"})
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, trials=trials)
    return run


def test_a_gateway_answering_every_prompt_with_one_short_sentence_is_refused(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    # Side B's twins are identical at any temperature, so the odd one is found without reading.
    run = canned_b_design(invoke, tmp_path, simulator, trials=10)
    result = invoke("generate", run)
    assert result.exit_code == 1, result.stderr
    line = result.stderr.strip().splitlines()[-1]
    assert 'side B (sim-small) gave the same answer, "I cannot help with that." (5 words), to ' in (
        line
    )
    assert "the prompt-independence count fired" in line
    assert "the determinism check fired" not in line  # canned texts are no evidence of it
    assert "side A" not in line
    assert not (run / "trials.jsonl").exists()


def test_a_canned_side_at_no_latency_is_refused_within_a_few_prompts_not_after_the_run(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    # An endpoint answering at once used to be refused only at the next quarter-second poll:
    # 118 of a 120-slot run fetched (and paid for) before the stop. The stop now wakes the run
    # as the count fires (at 5 prompts) and no worker takes another slot; only the requests
    # already in flight (4 a side) may land after it.
    run = canned_b_design(invoke, tmp_path, simulator, trials=40)
    result = invoke("generate", run, "--concurrency", "4")
    assert result.exit_code == 1, result.stderr
    assert "to 5 of the 5 prompts it answered" in result.stderr
    fetched = len(rows(run))
    assert fetched <= 5 * 3 + 2 * 4, fetched  # the prompts the count needs, and what was in flight


def test_a_deterministic_side_of_eight_word_sentences_is_refused_by_the_determinism_check() -> None:
    # Each prompt its own 8-word sentence, repeated: too short for the old 5-word allowance
    # to matter, caught at ten pairs (0.9 / 0.8^7 = 4.3 a pair).
    collisions = DrawCollisions.for_design(alternating(20), twins(20, "A", 8))
    assert collisions.deterministic_sides() == ["A"]
    assert collisions.fired("prompt_independent") == []


def test_one_token_answers_at_temperature_one_trip_neither_check(
    invoke: Invoke, tmp_path: Path, simulator: Simulator
) -> None:
    run = tmp_path / "run"
    make_design(invoke, run, simulator, tmp_path, "--max-tokens", "1", trials=20)
    result = invoke("generate", run)
    assert result.exit_code == 0, result.stderr
    assert "fired" not in result.stderr


def test_the_guard_holds_one_entry_per_prompt_not_per_trial() -> None:
    # 4,000 trials over 10 prompts, every answer a new text: what each side's checks keep
    # grows with the prompts, and a trial's first twin is dropped once its second arrives.
    design: DesignRecord = {  # type: ignore[typeddict-item]  # only what the guard reads
        "protocol": "triangle",
        "arrangement": [
            {"trial": t, "prompt_id": f"p{t % 10}", "doubled": "AB"[t % 2], "odd_position": 3}
            for t in range(1, 4001)
        ],
    }
    collisions = DrawCollisions.empty(design)
    for t in range(1, 4001):
        doubled, other = ("A", "B") if t % 2 == 0 else ("B", "A")
        for slot, side in ((1, doubled), (2, doubled), (3, other)):
            collisions.take(t, slot, {"side": side, "text": f"answer {t} {slot} in five words"})
    assert collisions.pairs == 4000
    assert not collisions.first
    for kept in collisions.sides.values():
        assert kept.tally.prompts == len(kept.tally.owner) == 10
        assert not kept.tally.extra
    assert not collisions.refused()
