"""The pairing schedule of a k-candidate design: counts, balance, one answer per candidate
and prompt, determinism, and one-line refusals, as properties over hundreds of seeded cases."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest

from blindtest.model.pairing import (
    Comparison,
    PairingMode,
    parse_mode,
    schedule,
    schedule_size,
)


def names(k: int) -> list[str]:
    return [f"model-{i:02d}" for i in range(k)]


def cases(count: int, seed: int, *, max_comparisons: int = 2_500) -> list[tuple[int, str, int]]:
    """``count`` seeded (k, mode, prompts) cases: k from 2 to 20, every mode, M from 1 to
    k(k-1)/2, prompts from 1 to 200 (fewer when the schedule would pass ``max_comparisons``,
    to keep the suite quick)."""
    gen = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        k = int(gen.integers(2, 21))
        pairs = k * (k - 1) // 2
        kind = ("all", "reference", "sample")[int(gen.integers(0, 3))]
        if kind == "all":
            mode, per = "all", pairs
        elif kind == "reference":
            mode, per = f"reference:model-{int(gen.integers(0, k)):02d}", k - 1
        else:
            per = int(gen.integers(1, pairs + 1))
            mode = f"sample:{per}"
        top = max(1, min(200, max_comparisons // per))
        out.append((k, mode, int(gen.integers(1, top + 1))))
    return out


def pool_of(k: int, mode: str) -> list[tuple[str, str]]:
    every = list(itertools.combinations(names(k), 2))
    parsed = parse_mode(mode)
    if parsed.kind == "reference":
        return [pair for pair in every if parsed.reference in pair]
    return every


def per_prompt(k: int, mode: str) -> int:
    parsed = parse_mode(mode)
    if parsed.kind == "sample":
        assert parsed.per_prompt is not None
        return parsed.per_prompt
    return len(pool_of(k, mode))


def check_balance(
    comparisons: Sequence[Comparison], k: int, mode: str, prompts: int, trials: int | None
) -> None:
    pool = pool_of(k, mode)
    m = per_prompt(k, mode)
    expected = prompts * m if trials is None else min(trials, prompts * m)
    assert len(comparisons) == expected

    # Every pair of the pool meets equally often, within one.
    met = Counter(tuple(sorted((c.left, c.right))) for c in comparisons)
    assert set(met) <= set(pool)
    counts = [met.get(pair, 0) for pair in pool]
    assert max(counts) - min(counts) <= 1

    # Left as often as right, within one: within each pair and for each candidate overall.
    left = Counter((c.left, c.right) for c in comparisons)
    for a, b in pool:
        assert abs(left[(a, b)] - left[(b, a)]) <= 1
    on_left = Counter(c.left for c in comparisons)
    on_right = Counter(c.right for c in comparisons)
    for name in names(k):
        assert abs(on_left[name] - on_right[name]) <= 1

    # A prompt never holds a pair twice, so a candidate answers it at most once and that
    # answer serves all its comparisons there; the cap uses the first prompts, in full.
    by_prompt = Counter(c.prompt for c in comparisons)
    assert all(0 <= p < prompts for p in by_prompt)
    assert all(n <= m for n in by_prompt.values())
    seen = Counter((c.prompt, tuple(sorted((c.left, c.right)))) for c in comparisons)
    assert max(seen.values()) == 1
    used = sorted(by_prompt)
    assert used == list(range(len(used)))
    assert all(by_prompt[p] == m for p in used[:-1])

    size = schedule_size(comparisons, names(k))
    answers = {(c.prompt, c.left) for c in comparisons} | {(c.prompt, c.right) for c in comparisons}
    assert size.comparisons == expected
    assert size.answers == len(answers) <= k * len(used)
    assert size.prompts == len(used)
    assert sum(n for _, n in size.answers_per_candidate) == size.answers


@pytest.mark.parametrize("chunk", range(4))
def test_every_mode_is_balanced_over_hundreds_of_seeds(chunk: int) -> None:
    for number, (k, mode, prompts) in enumerate(cases(100, 2026 + chunk)):
        seed = f"seed-{chunk}-{number}"
        check_balance(schedule(names(k), prompts, mode, seed), k, mode, prompts, None)


@pytest.mark.parametrize("chunk", range(2))
def test_a_cap_keeps_the_balance(chunk: int) -> None:
    gen = np.random.default_rng(77 + chunk)
    for number, (k, mode, prompts) in enumerate(cases(100, 3030 + chunk)):
        full = prompts * per_prompt(k, mode)
        trials = int(gen.integers(1, full + 2))  # sometimes above the full count: no cap
        seed = f"cap-{chunk}-{number}"
        check_balance(schedule(names(k), prompts, mode, seed, trials=trials), k, mode, prompts,
                      trials)  # fmt: skip


def test_all_meets_every_pair_on_every_prompt() -> None:
    comparisons = schedule(names(5), 7, "all", "s")
    for prompt in range(7):
        pairs = {tuple(sorted((c.left, c.right))) for c in comparisons if c.prompt == prompt}
        assert pairs == set(itertools.combinations(names(5), 2))
    assert schedule_size(comparisons).answers == 5 * 7


def test_reference_puts_the_reference_in_every_comparison() -> None:
    comparisons = schedule(names(6), 9, "reference:model-03", "s")
    assert all("model-03" in (c.left, c.right) for c in comparisons)
    for prompt in range(9):
        others = {c.left if c.right == "model-03" else c.right for c in comparisons
                  if c.prompt == prompt}  # fmt: skip
        assert others == set(names(6)) - {"model-03"}
    # The reference sits left in half of its comparisons (45 of them: 22 or 23).
    assert sum(c.left == "model-03" for c in comparisons) in (22, 23)


def test_sample_spreads_pairs_evenly_and_candidates_nearly_so() -> None:
    comparisons = schedule(names(10), 1000, "sample:3", "bench")
    met = Counter(tuple(sorted((c.left, c.right))) for c in comparisons)
    assert sorted(set(met.values())) in ([66], [66, 67])  # 3000 / 45 = 66.7
    appearances = Counter(c.left for c in comparisons) + Counter(c.right for c in comparisons)
    # Rounds are round-robin matchings: every candidate appears 600 times, within a few.
    assert max(appearances.values()) - min(appearances.values()) <= 2


def test_same_seed_same_schedule_and_other_seed_another() -> None:
    first = schedule(names(8), 40, "sample:5", "alpha")
    assert schedule(names(8), 40, "sample:5", "alpha") == first
    assert schedule(names(8), 40, parse_mode("sample:5"), "alpha") == first
    assert schedule(names(8), 40, "sample:5", "beta") != first


def test_the_shown_order_mixes_prompts() -> None:
    comparisons = schedule(names(4), 50, "all", "order")
    prompts = [c.prompt for c in comparisons]
    assert prompts != sorted(prompts)


@pytest.mark.parametrize(
    ("candidates", "mode", "prompts", "trials", "message"),
    [
        (["a"], "all", 3, None, "1 candidates: a design takes 2 to 20"),
        ([f"m{i}" for i in range(21)], "all", 3, None, "21 candidates: a design takes 2 to 20"),
        (["a", "b", "a"], "all", 3, None, "candidate 'a' is named twice"),
        (["a", "b", ""], "all", 3, None, "candidate names must be non-empty text"),
        (["a", "b", "c"], "sample:4", 3, None, "3 candidates make 3 pairs, so M must be 1 to 3"),
        (["a", "b", "c"], "sample:0", 3, None, "sample:M must be a whole number >= 1"),
        (["a", "b", "c"], "sample:x", 3, None, "sample:M must be a whole number >= 1"),
        (["a", "b", "c"], "reference:z", 3, None, "no candidate of that name"),
        (["a", "b", "c"], "reference:", 3, None, "give all, reference:NAME or sample:M"),
        (["a", "b", "c"], "some", 3, None, "give all, reference:NAME or sample:M"),
        (["a", "b", "c"], "all", 0, None, "prompts must be a whole number >= 1"),
        (["a", "b", "c"], "all", 3, 0, "trials=0: give at least 1"),
    ],
)
def test_bad_input_is_one_clear_value_error(
    candidates: list[str], mode: str, prompts: int, trials: int | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")) as caught:
        schedule(candidates, prompts, mode, "s", trials=trials)
    assert "\n" not in str(caught.value)


def test_mode_text_round_trips() -> None:
    for text in ("all", "reference:gpt-x", "sample:3"):
        assert str(parse_mode(text)) == text
    assert parse_mode(" sample:12 ") == PairingMode("sample", per_prompt=12)
