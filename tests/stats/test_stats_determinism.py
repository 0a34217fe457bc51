"""A deterministic side is refused at any length, weighed by the chance of collision; answers
that do not depend on the prompt are a separate count; each says that it fired."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from blindtest.stats.determinism import (
    AGREE_PER_WORD,
    DETERMINISTIC_MISS,
    STOP_EVIDENCE,
    BoundedDeterminismTally,
    DeterminismTally,
    chance_of_repeat,
    determinism_check,
    pair_evidence,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import gate_simulation as sim
from bounded_tally_reference import ReferenceBoundedTally


def _side(
    answers: list[tuple[str, str]], repeat: bool = True
) -> tuple[list[tuple[str, str, int]], list[tuple[str, str, int]]]:
    """Twin pairs and answers for a side that answers each (prompt, text); the second twin is
    the same text when ``repeat``, else a variant."""
    twins, rows = [], []
    for prompt, text in answers:
        words = len(text.split())
        second = text if repeat else text + " (again)"
        twins.append((text, second, words))
        rows += [(prompt, text, words), (prompt, second, len(second.split()))]
    return twins, rows


def test_the_same_short_sentence_to_every_prompt_fires_the_prompt_independence_count() -> None:
    # A gateway answering every prompt "I cannot help with that." passed a 10-trial triangle.
    twins, rows = _side([(f"p{i}", "I cannot help with that.") for i in range(5)])
    rows += [(f"q{i}", "I cannot help with that.", 5) for i in range(5)]  # as the odd one
    found = determinism_check(twins, rows, planned_pairs=5)
    assert found.prompt_independent
    assert found.fired == ("prompt_independent",)
    assert found.common_prompts == 10
    # Its collisions are a canned text's, which repeat at any temperature: no evidence.
    assert found.identical_canned == 5
    assert not found.deterministic


def test_a_deterministic_side_with_prompt_specific_sentences_is_caught_at_any_length() -> None:
    eight = [(f"p{i}", f"answer number {i} is the one you want") for i in range(10)]
    twins, rows = _side(eight)
    found = determinism_check(twins, rows, planned_pairs=10)
    assert found.fired == ("deterministic",)
    assert found.evidence == pytest.approx(10 * math.log10(0.9 / AGREE_PER_WORD**7))
    three = [(f"p{i}", f"answer {i} here") for i in range(60)]
    assert determinism_check(*_side(three[:40]), planned_pairs=60).deterministic is False
    assert determinism_check(*_side(three[:42]), planned_pairs=60).deterministic is True


def test_one_word_answers_at_temperature_one_never_trip_it() -> None:
    words = ["Yes", "No", "Paris", "B"]
    answers = [(f"p{i}", words[i % 4] + str(i)) for i in range(400)]
    found = determinism_check(*_side(answers), planned_pairs=400)
    assert not found.deterministic
    assert found.evidence == pytest.approx(400 * math.log10(1 - DETERMINISTIC_MISS))
    # A yes/no workload repeats "No" across prompts: one-word texts are not counted as canned.
    yes_no = [(f"p{i}", "No") for i in range(50)]
    assert determinism_check(*_side(yes_no)).fired == ()


def test_long_answers_need_the_minimum_pairs_before_judging() -> None:
    long = [(f"p{i}", " ".join(f"w{i}_{j}" for j in range(60))) for i in range(9)]
    twins, rows = _side(long)
    assert determinism_check(twins[:2], rows, planned_pairs=40).deterministic is False
    assert determinism_check(twins[:2], rows, planned_pairs=2).deterministic is True


def test_a_sampling_side_whose_draws_differ_gathers_no_evidence() -> None:
    answers = [(f"p{i}", f"a long varied answer {i} with many words in it") for i in range(30)]
    found = determinism_check(*_side(answers, repeat=False))
    assert found.identical == 0
    assert found.evidence == pytest.approx(30 * math.log10(DETERMINISTIC_MISS))
    assert found.fired == ()


def test_chance_of_repeat_bounds() -> None:
    assert chance_of_repeat(0) == chance_of_repeat(1) == 1.0
    assert chance_of_repeat(2) == pytest.approx(AGREE_PER_WORD)
    assert chance_of_repeat(500) == pytest.approx(1e-4)
    assert chance_of_repeat(30, canned=True) == 1.0
    assert pair_evidence(None) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="words must be an integer >= 0, got -1"):
        chance_of_repeat(-1)


def test_record_is_json_ready() -> None:
    record = determinism_check(*_side([("p", "one two three")])).to_dict()
    assert record["fired"] == []
    assert record["pairs"] == 1


@pytest.mark.parametrize("words", [1, 2, 4, 8, 20])
def test_a_sampling_side_within_the_collision_bound_does_not_trip(words: int) -> None:
    # Each word agrees with chance AGREE_PER_WORD, the bound itself for words > 1 (and an
    # even likelier repeat at one word): Ville's inequality caps the trip rate at 1e-6.
    rng = np.random.default_rng(words)
    identical = sim.twin_pairs(rng, 2000, 100, words, AGREE_PER_WORD)
    gain = math.log10((1 - DETERMINISTIC_MISS) / chance_of_repeat(words))
    steps = np.where(identical, gain, math.log10(DETERMINISTIC_MISS))
    paths = np.cumsum(steps, axis=1)[:, 9:]  # judged from the 10th pair on
    assert not (paths >= math.log10(STOP_EVIDENCE)).any()


@pytest.mark.parametrize("seed", range(8))
def test_running_tally_equals_the_check_over_the_lists(seed: int) -> None:
    # A side mixing canned sentences, one-word answers, prompt-specific repeats and misses.
    rng = np.random.default_rng(seed)
    texts = ["I cannot help with that.", "Error: upstream timeout", "No", "Yes"]
    tally = DeterminismTally(planned_pairs=40)
    twins: list[tuple[str, str, int]] = []
    answers: list[tuple[str, str, int]] = []
    for i in range(int(rng.integers(5, 60))):
        prompt = f"p{i}"
        roll = rng.random()
        text = (
            texts[int(rng.integers(0, 4))]
            if roll < 0.4
            else f"answer to {prompt} in words " * int(rng.integers(1, 4))
        )
        words = len(text.split())
        second = text if rng.random() < 0.7 else text + " more"
        events = [("answer", prompt, text, words), ("answer", prompt, second,
                  len(second.split())), ("pair", text, second, words)]  # fmt: skip
        if rng.random() < 0.5:
            events.reverse()
        for kind, a, b, w in events:
            if kind == "answer":
                tally.add_answer(a, b, w)
                answers.append((a, b, w))
            else:
                tally.add_pair(a, b, w)
                twins.append((a, b, w))
    got, want = tally.result(), determinism_check(twins, answers, planned_pairs=40)
    assert got.evidence == pytest.approx(want.evidence, abs=1e-9)
    assert got.to_dict() | {"evidence": 0} == want.to_dict() | {"evidence": 0}


def _feed(tally: object, rows: list[tuple[str, int, str, int]]) -> None:
    for kind, prompt, text, words in rows:
        if kind == "answer":
            tally.add_answer(prompt, text, words)  # type: ignore[attr-defined]
        else:
            tally.add_pair(prompt, text, text, words)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("texts", "fired"),
    [
        (lambda p: f"answer number {p} is the one you want", ("deterministic",)),
        (lambda p: "I cannot help with that.", ("prompt_independent",)),
        (lambda p: "Yes", ()),
    ],
)
def test_the_bounded_tally_fires_as_the_full_check_on_deterministic_canned_and_one_word_sides(
    texts: Any, fired: tuple[str, ...]
) -> None:
    bounded, full = BoundedDeterminismTally(planned_pairs=12), DeterminismTally(planned_pairs=12)
    for i in range(12):
        prompt, text = i, texts(i)
        words = len(text.split())
        rows = [("answer", prompt, text, words)] * 2 + [("pair", prompt, text, words)]
        _feed(bounded, rows)
        for kind, _, t, w in rows:
            if kind == "answer":
                full.add_answer(f"p{prompt}", t, w)
            else:
                full.add_pair(t, t, w)
    assert bounded.fired() == fired
    got, want = bounded.result(), full.result()
    assert got.to_dict() | {"evidence": 0} == want.to_dict() | {"evidence": 0}
    assert got.evidence == pytest.approx(want.evidence, abs=1e-9)


def test_the_bounded_tally_holds_one_entry_per_prompt_however_many_answers() -> None:
    # A sampling side answering 10 prompts 3,000 times, every answer a new text.
    tally = BoundedDeterminismTally()
    for n in range(1000):
        prompt = n % 10
        tally.add_answer(prompt, f"text {n} a", 3)
        tally.add_answer(prompt, f"text {n} b", 3)
        tally.add_pair(prompt, f"text {n} a", f"text {n} b", 3)
        tally.add_answer(prompt, f"text {n} c", 3)
    assert tally.fired() == ()
    assert tally.prompts == len(tally.answered) == len(tally.owner) == 10
    assert not tally.canned
    assert not tally.unopened
    assert not tally.extra
    assert not tally.pair_count


def _stream(rng: np.random.Generator, guard_order: bool) -> list[tuple[str, int, str, str, int]]:
    """A side's answers and twin pairs as (kind, prompt, text, second text, words): canned
    sentences, one-word answers, prompt-specific texts that repeat (deterministic) or not,
    prompts answered once or several times; in the guard's order (a pair after both of its
    answers) or shuffled (a pair before its answers, a prompt's answers in any order)."""
    canned = ["I cannot help with that.", "Error: upstream timeout", "No", "Yes"]
    events: list[tuple[str, int, str, str, int]] = []
    for _ in range(int(rng.integers(1, 120))):
        prompt = int(rng.integers(0, int(rng.integers(1, 60))))
        roll = rng.random()
        if roll < 0.3:
            text = canned[int(rng.integers(0, 4))]
        elif roll < 0.4:
            text = f"an answer of prompt {int(rng.integers(0, 60))} borrowed"  # another's
        else:
            text = f"answer to p{prompt} variant {int(rng.integers(0, 3))}"
        second = text if rng.random() < 0.6 else f"{text} again"
        group = [("answer", prompt, text, text, len(text.split()))]
        if rng.random() < 0.7:  # the doubled side: two draws and their pair
            group.append(("answer", prompt, second, second, len(second.split())))
            group.append(("pair", prompt, text, second, len(text.split())))
        events += group
    if not guard_order:
        order = rng.permutation(len(events))
        events = [events[i] for i in order]
    return events


@pytest.mark.parametrize("guard_order", [True, False])
def test_the_compact_bounded_tally_fires_and_counts_as_the_one_it_replaced(
    guard_order: bool,
) -> None:
    # Three hundred random answer streams fed to the tally as it was first written (three
    # dicts per text) and to the compact one: the same checks fire after every event, and
    # every count agrees at the end (texts as digests, as the guard gives them, and as text).
    rng = np.random.default_rng(20261206 + guard_order)
    for _ in range(300):
        events = _stream(rng, guard_order)
        planned = int(rng.integers(0, 40))
        for digest in (False, True):
            old, new = ReferenceBoundedTally(planned), BoundedDeterminismTally(planned)
            for kind, prompt, text, second, words in events:
                key, other = (hash(text), hash(second)) if digest else (text, second)
                if kind == "answer":
                    old.add_answer(f"p{prompt}", key, words)
                    new.add_answer(prompt, key, words)
                else:
                    old.add_pair(f"p{prompt}", key, other, words)
                    new.add_pair(prompt, key, other, words)
                assert new.fired() == old.fired()
                assert new.common == old.common
            got, want = new.result(), old.result()
            assert got.to_dict() | {"evidence": 0} == want.to_dict() | {"evidence": 0}
            assert got.evidence == pytest.approx(want.evidence, abs=1e-9)
