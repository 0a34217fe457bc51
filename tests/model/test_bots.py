"""blindtest.model.bots: the mechanical judges shared by bt-judge and bt-audit."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from blindtest.model.bots import (
    DUPLICATE_THRESHOLD,
    BotPick,
    bot_pick,
    duplicate_bot,
    length_bot,
    length_from_words,
    length_pair_bot,
    length_preference_bot,
    random_bot,
    random_pair_bot,
    random_preference_bot,
    similarity,
)
from blindtest.model.picks import Trial
from blindtest.model.rng import DesignRng


class ScriptedRng:
    """Returns scripted draws and records every ``n`` it was asked for."""

    def __init__(self, *draws: int) -> None:
        self.draws = list(draws)
        self.asked: list[int] = []

    def randbelow(self, n: int) -> int:
        self.asked.append(n)
        return self.draws.pop(0)


def words(n: int, word: str = "w") -> str:
    return " ".join([word] * n)


# --- length ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counts", "pick"),
    [((100, 100, 10), 3), ((10, 100, 100), 1), ((50, 200, 60), 2), ((50, 55, 200), 3)],
)
def test_length_bot_picks_the_length_least_like_the_other_two(
    counts: tuple[int, int, int], pick: int
) -> None:
    rng = ScriptedRng()
    assert length_bot([words(n) for n in counts], rng) == pick
    assert rng.asked == []  # no tie, no draw


def test_length_bot_measures_words_not_characters() -> None:
    options = ["a b c", "alpha beta gamma", "x y z w v u"]
    assert length_bot(options) == 3


def test_length_bot_breaks_ties_with_the_rng_among_tied_positions() -> None:
    equally_spaced = [words(10), words(20), words(30)]
    rng = ScriptedRng(1)
    assert length_bot(equally_spaced, rng) == 3
    assert rng.asked == [2]


def test_length_bot_guesses_uniformly_when_all_lengths_match() -> None:
    rng = ScriptedRng(2)
    assert length_bot([words(5)] * 3, rng) == 3
    assert rng.asked == [3]


def test_length_bot_without_rng_breaks_ties_to_the_lowest_position() -> None:
    assert length_bot([words(10), words(20), words(30)]) == 1
    assert length_bot([words(5)] * 3) == 1


def test_triangle_bots_need_three_options() -> None:
    with pytest.raises(ValueError, match="triangle bots need 3 options, got 2"):
        length_bot(["a", "b"])
    with pytest.raises(ValueError, match="got 4"):
        duplicate_bot(["a", "b", "c", "d"], ScriptedRng())
    with pytest.raises(ValueError, match="got 1"):
        random_bot(["a"], ScriptedRng())


def test_length_bot_finds_a_model_that_always_writes_longer() -> None:
    rng = DesignRng("seed", "arrangement")
    for trial in range(30):
        odd = rng.randbelow(3)
        options = [words(40 + trial % 7) for _ in range(3)]
        options[odd] = words(90 + trial % 5)
        assert length_bot(options, DesignRng("seed", f"bot:length:{trial}")) == odd + 1


# --- duplicate ------------------------------------------------------------------------------

ANSWER = "The capital of France is Paris, which is also its largest city by population."
OTHER = "Paris. It has been the seat of French government for most of the last thousand years."


def test_duplicate_bot_fires_on_two_identical_responses_and_picks_the_third() -> None:
    rng = ScriptedRng()
    assert duplicate_bot([ANSWER, OTHER, ANSWER], rng) == BotPick(2, True, 1.0)
    assert rng.asked == []


def test_duplicate_bot_sees_through_formatting_and_case() -> None:
    bold = ANSWER.replace("Paris", "**PARIS**")
    pick = duplicate_bot([OTHER, ANSWER, bold], ScriptedRng())
    assert (pick.pick, pick.fired, pick.similarity) == (1, True, 1.0)


def test_duplicate_bot_fires_on_a_one_word_difference_in_a_long_answer() -> None:
    near = ANSWER.replace("largest", "biggest")
    pick = duplicate_bot([ANSWER, near, OTHER], ScriptedRng())
    assert pick.fired
    assert pick.pick == 3
    assert DUPLICATE_THRESHOLD <= pick.similarity < 1.0


def test_duplicate_bot_fires_on_long_answers_that_differ_in_a_few_words() -> None:
    long_answer = " ".join(f"{word}{i % 37}" for i, word in enumerate(["the", "a", "of"] * 150))
    edited = long_answer.replace("the0 ", "THAT ").replace("of50 ", "from ")
    pick = duplicate_bot([OTHER, long_answer, edited], ScriptedRng())
    assert (pick.pick, pick.fired) == (1, True)


def test_duplicate_bot_guesses_when_nothing_is_near_identical() -> None:
    rng = ScriptedRng(0)
    pick = duplicate_bot([ANSWER, OTHER, "Something else entirely, at length."], rng)
    assert pick.pick == 1
    assert not pick.fired
    assert pick.similarity < DUPLICATE_THRESHOLD
    assert rng.asked == [3]


def test_duplicate_bot_does_not_fire_when_all_three_are_near_identical() -> None:
    rng = ScriptedRng(1)
    pick = duplicate_bot([ANSWER] * 3, rng)
    assert pick == BotPick(pick=2, fired=False, similarity=1.0)


def test_bot_pick_to_dict_feeds_the_picks_bot_field() -> None:
    assert BotPick(2, False, 0.25).to_dict() == {"pick": 2, "fired": False, "similarity": 0.25}


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [("", "", 1.0), ("", "word", 0.0), ("a b c d", "a b c d", 1.0), ("a b c d", "a b x d", 0.75)],
)
def test_similarity_is_the_word_level_ratio(first: str, second: str, expected: float) -> None:
    assert similarity(first, second) == pytest.approx(expected)


@given(st.text(max_size=80), st.text(max_size=80))
def test_similarity_is_between_zero_and_one(first: str, second: str) -> None:
    assert 0.0 <= similarity(first, second) <= 1.0


# --- random ---------------------------------------------------------------------------------


def test_random_bot_is_uniform_over_positions() -> None:
    rng = DesignRng("uniformity", "bot:random")
    counts = Counter(random_bot(["a", "b", "c"], rng) for _ in range(3000))
    assert set(counts) == {1, 2, 3}
    # Binomial(3000, 1/3) has sd ~ 25.8; 5 sd either side.
    assert all(871 <= count <= 1129 for count in counts.values())


def test_random_bot_replays_identically_from_the_same_seed() -> None:
    def run() -> list[int]:
        rng = DesignRng("s", "bot:random")
        return [random_bot(["a", "b", "c"], rng) for _ in range(50)]

    assert run() == run()


# --- preference and pair -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("left", "right", "pick"),
    [(words(30), words(10), "left"), (words(10), words(30), "right"), (words(7), words(7), "tie")],
)
def test_length_preference_bot_prefers_the_longer(left: str, right: str, pick: str) -> None:
    assert length_preference_bot([left, right]) == pick


def test_random_preference_bot_never_says_tie() -> None:
    rng = DesignRng("s", "bot:random")
    picks = Counter(random_preference_bot(["a", "b"], rng) for _ in range(200))
    assert set(picks) == {"left", "right"}


def test_preference_and_pair_bots_need_two_options() -> None:
    with pytest.raises(ValueError, match="preference bots need 2 options, got 3"):
        length_preference_bot(["a", "b", "c"])
    with pytest.raises(ValueError, match="pair bots need 2 options, got 1"):
        length_pair_bot(["a"])


def test_length_pair_bot_gives_the_first_nickname_to_the_longer_response() -> None:
    assert length_pair_bot([words(30), words(10)]) == "longer"
    assert length_pair_bot([words(10), words(30)]) == "shorter"
    assert length_pair_bot([words(10), words(30)], nicknames=("Ann", "Bob")) == "Bob"


def test_length_pair_bot_guesses_on_equal_lengths() -> None:
    rng = ScriptedRng(1)
    assert length_pair_bot([words(5), words(5)], rng) == "shorter"
    assert rng.asked == [2]
    assert length_pair_bot([words(5), words(5)]) == "longer"


@pytest.mark.parametrize("nicknames", [("x", "x"), ("", "y"), ("left", "y"), ("a", "tie")])
def test_pair_bots_refuse_nicknames_a_pick_cannot_carry(nicknames: tuple[str, str]) -> None:
    with pytest.raises(ValueError, match="nickname"):
        random_pair_bot(["a", "b"], ScriptedRng(0), nicknames=nicknames)


def test_random_pair_bot_names_option_one_at_random() -> None:
    rng = DesignRng("s", "bot:random")
    picks = Counter(random_pair_bot(["a", "b"], rng) for _ in range(200))
    assert set(picks) == {"X", "Y"}


@pytest.mark.parametrize(("protocol", "options"), [("triangle", 3), ("pair", 2), ("preference", 2)])
def test_the_length_bot_from_counted_words_picks_and_draws_as_from_the_texts(
    protocol: str, options: int
) -> None:
    # Word counts from a small range, so that many trials tie and the generator is drawn.
    counts = np.random.default_rng(7).integers(0, 3, (60, options)).tolist()
    from_texts, from_words = DesignRng("s", "bot:length"), DesignRng("s", "bot:length")
    for number, words_of in enumerate(counts, start=1):
        trial = Trial(number=number, prompt="p", options=tuple(words(n) for n in words_of))
        made = bot_pick("length", protocol, trial, from_texts)
        assert length_from_words(protocol, words_of, from_words) == made.pick
    assert from_texts.randbelow(1000) == from_words.randbelow(1000)  # drawn alike
