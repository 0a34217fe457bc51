"""bt-design as a library: the arrangement rules of DESIGN.md, checked over many seeds."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from blindtest.designing.build import DesignOptions, ModelSpec, build_arrangement, build_design
from blindtest.errors import BadInput
from blindtest.model.prompts import Prompt
from blindtest.rundir import artifacts

PROVENANCE: dict[str, Any] = {"blindtest": "test", "python": "3", "packages": {}, "git": None}


def make_prompts(n: int) -> list[Prompt]:
    return [Prompt(id=f"p{i:03d}", text=f"prompt {i}", line=i) for i in range(1, n + 1)]


def options(**overrides: object) -> DesignOptions:
    base: dict[str, object] = {"a": ModelSpec("model-a"), "b": ModelSpec("model-b"), "seed": "s"}
    base.update(overrides)
    return DesignOptions(**base)  # type: ignore[arg-type]


def test_design_validates_against_its_schema() -> None:
    for protocol in ("triangle", "pair", "preference"):
        design = build_design(make_prompts(25), options(protocol=protocol), PROVENANCE)
        artifacts.validate(design, "design", "design.json")


def test_same_inputs_give_byte_identical_design() -> None:
    first = artifacts.dump_json(build_design(make_prompts(30), options(seed="x"), PROVENANCE))
    second = artifacts.dump_json(build_design(make_prompts(30), options(seed="x"), PROVENANCE))
    other = artifacts.dump_json(build_design(make_prompts(30), options(seed="y"), PROVENANCE))
    assert first == second
    assert first != other


def rederive(seed: str, trials: int, prompt_ids: list[str], protocol: str) -> list[tuple[Any, ...]]:
    """An independent re-derivation written from the docstrings of rng.py and design.py only,
    the way a sceptical user would do it, without importing the code under test."""

    def words(label: str) -> Iterator[int]:
        block = 0
        while True:
            digest = hashlib.sha256(
                b"blindtest/rng@1\x00"
                + seed.encode()
                + b"\x00"
                + label.encode()
                + b"\x00"
                + str(block).encode()
            ).digest()
            for i in range(4):
                yield int.from_bytes(digest[8 * i : 8 * i + 8], "big")
            block += 1

    def below(stream: Iterator[int], n: int) -> int:
        for word in stream:
            if word < 2**64 - 2**64 % n:
                return word % n
        raise AssertionError

    def shuffle(stream: Iterator[int], xs: list[Any]) -> None:
        for i in range(len(xs) - 1, 0, -1):
            j = below(stream, i + 1)
            xs[i], xs[j] = xs[j], xs[i]

    def balanced(label: str) -> list[str]:
        stream = words(label)
        sides = ["A", "B"] * (trials // 2) + (["AB"[below(stream, 2)]] if trials % 2 else [])
        shuffle(stream, sides)
        return sides

    order = list(range(len(prompt_ids)))
    shuffle(words("prompts"), order)
    chosen = [prompt_ids[i] for i in order[:trials]]
    if protocol != "triangle":
        return list(zip(chosen, balanced("left"), strict=True))
    odd = words("odd_position")
    return [(p, d, below(odd, 3) + 1) for p, d in zip(chosen, balanced("doubled"), strict=True)]


@pytest.mark.parametrize("protocol", ["triangle", "pair"])
def test_arrangement_rederives_independently_from_the_documentation(protocol: str) -> None:
    ids = [f"p{i}" for i in range(1, 26)]
    for seed in ["golden", "7", "naïve seed ✓", *map(str, range(40))]:
        for trials in (1, 6, 20, 25):
            ours = build_arrangement(seed, trials, ids, protocol)
            keys = (
                ("prompt_id", "doubled", "odd_position")
                if protocol == "triangle"
                else ("prompt_id", "left")
            )
            assert [tuple(dict(a)[k] for k in keys) for a in ours] == rederive(
                seed, trials, ids, protocol
            )


@pytest.mark.parametrize("n", [1, 2, 5, 20, 23, 30])
def test_each_prompt_used_at_most_once_and_doubled_model_balanced(n: int) -> None:
    for seed in range(200):
        arrangement = build_arrangement(str(seed), n, [f"q{i}" for i in range(40)], "triangle")
        assert [a["trial"] for a in arrangement] == list(range(1, n + 1))
        assert len({a["prompt_id"] for a in arrangement}) == n
        doubled = Counter(a["doubled"] for a in arrangement)
        assert abs(doubled["A"] - doubled["B"]) == n % 2


@pytest.mark.parametrize("n", [2, 7, 20])
def test_pair_and_preference_sides_balanced(n: int) -> None:
    for protocol in ("pair", "preference"):
        for seed in range(200):
            arrangement = build_arrangement(str(seed), n, [f"q{i}" for i in range(n)], protocol)
            left = Counter(a["left"] for a in arrangement)
            assert abs(left["A"] - left["B"]) == n % 2
            assert all("odd_position" not in a for a in arrangement)


def test_odd_extra_doubled_side_is_decided_by_the_seed_evenly() -> None:
    extras: Counter[str] = Counter()
    for seed in range(2000):
        doubled = Counter(
            a["doubled"] for a in build_arrangement(str(seed), 5, list("abcde"), "triangle")
        )
        extras[doubled.most_common(1)[0][0]] += 1
    assert stats.binomtest(extras["A"], 2000, 0.5).pvalue > 1e-3


def test_odd_position_is_uniform_over_many_seeds() -> None:
    counts = np.zeros(3, dtype=int)
    for seed in range(1500):
        for entry in build_arrangement(
            f"seed-{seed}", 20, [f"q{i}" for i in range(20)], "triangle"
        ):
            counts[entry["odd_position"] - 1] += 1
    assert stats.chisquare(counts).pvalue > 1e-3


def test_odd_position_is_independent_of_the_doubled_side() -> None:
    table = np.zeros((2, 3), dtype=int)
    for seed in range(1500):
        for entry in build_arrangement(str(seed), 20, [f"q{i}" for i in range(20)], "triangle"):
            table[int(entry["doubled"] == "B"), entry["odd_position"] - 1] += 1
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_prompt_draw_is_uniform_across_positions() -> None:
    # Every prompt is equally likely to land in trial 1: the draw does not favour file order.
    firsts: Counter[str] = Counter()
    for seed in range(3000):
        firsts[
            build_arrangement(str(seed), 3, [f"q{i}" for i in range(6)], "pair")[0]["prompt_id"]
        ] += 1
    assert stats.chisquare([firsts[f"q{i}"] for i in range(6)]).pvalue > 1e-3


def test_doubled_side_is_not_strict_alternation() -> None:
    sequences = {
        tuple(a["doubled"] for a in build_arrangement(str(s), 10, list("abcdefghij"), "triangle"))
        for s in range(50)
    }
    assert len(sequences) > 40


def test_triangle_refused_at_temperature_zero() -> None:
    with pytest.raises(BadInput, match=r"refused at temperature 0.*use protocol=pair"):
        build_design(make_prompts(20), options(a=ModelSpec("m", temperature=0.0)), PROVENANCE)


def test_pair_allowed_at_temperature_zero() -> None:
    zero = options(
        protocol="pair", a=ModelSpec("m", temperature=0), b=ModelSpec("n", temperature=0)
    )
    assert build_design(make_prompts(20), zero, PROVENANCE)["protocol"] == "pair"


@pytest.mark.parametrize(
    ("overrides", "prompts", "message"),
    [
        ({"trials": 20}, 12, r"found 12 distinct prompts, need 20.*use trials=12"),
        ({"trials": 0}, 12, r"^trials must be at least 1, got 0"),
        ({"alpha": 0.0}, 30, r"^alpha must be in \(0, 0.5\], got 0.0"),
        ({"alpha": 0.6}, 30, r"^alpha must be in \(0, 0.5\], got 0.6"),
        ({"alpha": float("nan")}, 30, r"^alpha must be in"),
        ({"protocol": "abx"}, 30, r"unknown protocol 'abx'"),
        ({"protocol": "pair", "sequential": True}, 30, r"^sequential is defined for the triangle"),
        ({"similarity_pd0": 1.5}, 30, r"^similarity_pd0 must be in \(0, 1\), got 1.5"),
        ({"protocol": "preference", "similarity_pd0": 0.3}, 30, r"triangle and pair"),
        ({"sequential": True, "similarity_pd0": 0.3}, 30, r"cannot be combined"),
        ({"seed": ""}, 30, r"^seed must not be empty"),
    ],
)
def test_bad_designs_are_refused(overrides: dict[str, object], prompts: int, message: str) -> None:
    with pytest.raises(BadInput, match=message):
        build_design(make_prompts(prompts), options(**overrides), PROVENANCE)


def test_preference_requires_a_reason_by_default_and_others_do_not() -> None:
    pref = build_design(make_prompts(20), options(protocol="preference"), PROVENANCE)
    tri = build_design(make_prompts(20), options(), PROVENANCE)
    assert pref["judging"]["require_reason"] is True
    assert pref["judging"]["question"] == "Which would you rather use?"
    assert tri["judging"]["require_reason"] is False


def test_design_holds_key_names_never_keys() -> None:
    design = build_design(make_prompts(20), options(a=ModelSpec("m", key_env="MY_KEY")), PROVENANCE)
    assert design["models"]["A"]["key_env"] == "MY_KEY"
    bad = dict(design)
    bad["models"] = {
        "A": design["models"]["A"] | {"key_env": "sk-abc def"},
        "B": design["models"]["B"],
    }
    with pytest.raises(BadInput, match="key_env"):
        artifacts.validate(bad, "design", "design.json")


@settings(max_examples=300, deadline=None)
@given(seed=st.text(min_size=1, max_size=30), n=st.integers(1, 60), extra=st.integers(0, 20))
def test_balance_holds_for_any_seed_and_trial_count(seed: str, n: int, extra: int) -> None:
    ids = [f"q{i}" for i in range(n + extra)]
    triangle = build_arrangement(seed, n, ids, "triangle")
    pair = build_arrangement(seed, n, ids, "pair")
    assert len({a["prompt_id"] for a in triangle}) == n
    for arrangement, key in ((triangle, "doubled"), (pair, "left")):
        counts = Counter(dict(a)[key] for a in arrangement)
        assert abs(counts["A"] - counts["B"]) == n % 2
    assert all(a["odd_position"] in (1, 2, 3) for a in triangle)
    assert build_arrangement(seed, n, ids, "triangle") == triangle
