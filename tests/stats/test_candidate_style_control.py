"""Style control over several candidates (blindtest.stats.candidate_style): strengths with
style held equal and the style coefficients, against statsmodels' logistic regression on the
same +1/-1 design (tests/data/candidate_style_reference.py), what it says when there is no
estimate, and a seeded simulation of a judge that prefers length only."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from blindtest.model.rng import IndexStream
from blindtest.stats.candidate_style import candidate_style_control
from blindtest.stats.ranking import outcomes, rank_candidates

REFERENCE = json.loads(
    (Path(__file__).parents[1] / "data" / "candidate_style_reference.json").read_text()
)
COVARIATES = REFERENCE["covariates"]
#: statsmodels stops at its own tolerance (1e-12 on the step); the agreement seen is ~1e-14.
TOL = 1e-8


def _fit_case(name: str, which: str) -> tuple[Any, dict[str, Any]]:
    case = REFERENCE["cases"][name]
    data, ref = case["data"], case[which]
    names = [f"c{m}" for m in range(data["k"])]
    anchor = None if ref["anchor"] is None else names[ref["anchor"]]
    found = candidate_style_control(
        names,
        data["first"],
        data["second"],
        data["y"],
        data["x"],
        COVARIATES,
        data["prompt"],
        anchor=anchor,
    )
    return found, ref


@pytest.mark.parametrize("name", ["four", "three"])
@pytest.mark.parametrize("which", ["mean", "reference"])
def test_strengths_and_style_coefficients_match_statsmodels_logit(name: str, which: str) -> None:
    found, ref = _fit_case(name, which)
    assert found.problem is None
    assert found.converged
    np.testing.assert_allclose(
        [s.strength.estimate for s in found.strengths], ref["strength"], atol=TOL
    )
    np.testing.assert_allclose(
        [t.coefficient.estimate for t in found.terms], ref["gamma"], atol=TOL
    )
    np.testing.assert_allclose(found.log_likelihood, ref["log_likelihood"], atol=TOL)


@pytest.mark.parametrize("name", ["four", "three"])
@pytest.mark.parametrize("which", ["mean", "reference"])
def test_standard_errors_match_statsmodels_plain_and_prompt_clustered(
    name: str, which: str
) -> None:
    found, ref = _fit_case(name, which)
    np.testing.assert_allclose([s.se for s in found.strengths], ref["strength_se"], atol=TOL)
    np.testing.assert_allclose(
        [s.se_prompt for s in found.strengths], ref["strength_se_prompt"], atol=TOL
    )
    np.testing.assert_allclose([t.se for t in found.terms], ref["gamma_se"], atol=TOL)
    np.testing.assert_allclose([t.se_prompt for t in found.terms], ref["gamma_se_prompt"], atol=TOL)
    assert found.interval_unit == "prompt"
    assert found.interval_method == "Wald"
    for s in found.strengths:  # Wald's interval from the prompt-clustered standard error
        half = 1.959963984540054 * s.se_prompt
        assert s.strength.lo == pytest.approx(s.strength.estimate - half, abs=1e-12)
        assert s.strength.hi == pytest.approx(s.strength.estimate + half, abs=1e-12)


@pytest.mark.parametrize("name", ["four", "three"])
def test_differences_are_bonferroni_wald_with_statsmodels_clustered_standard_errors(
    name: str,
) -> None:
    found, ref = _fit_case(name, "mean")
    k = len(found.strengths)
    pairs = k * (k - 1) // 2
    z = stats.norm.ppf(1 - 0.05 / (2 * pairs))
    assert len(found.differences) == pairs
    half = [(d.difference.hi - d.difference.lo) / 2 for d in found.differences]
    np.testing.assert_allclose(np.array(half) / z, ref["difference_se_prompt"], atol=TOL)
    estimate = {s.candidate: s.strength.estimate for s in found.strengths}
    for d in found.differences:
        assert d.difference.estimate == pytest.approx(estimate[d.first] - estimate[d.second])
        assert d.separated == (d.difference.lo > 0 or d.difference.hi < 0)


def test_mean_anchor_centres_the_strengths_and_a_reference_sits_at_zero() -> None:
    mean, _ = _fit_case("four", "mean")
    ref, _ = _fit_case("four", "reference")
    assert sum(s.strength.estimate for s in mean.strengths) == pytest.approx(0.0, abs=1e-12)
    at_zero = ref.strengths[3]
    assert (at_zero.strength.estimate, at_zero.strength.lo, at_zero.strength.hi) == (0.0, 0.0, 0.0)
    shift = mean.strengths[3].strength.estimate
    for a, b in zip(mean.strengths, ref.strengths, strict=True):
        assert b.strength.estimate == pytest.approx(a.strength.estimate - shift, abs=1e-9)


def test_a_candidate_that_won_every_comparison_has_no_estimate_said_in_words() -> None:
    # c0 beats everyone always; the rest split.
    first = [0, 1, 0, 2, 1, 2, 1, 2, 0, 1]
    second = [1, 0, 2, 0, 2, 1, 2, 1, 1, 2]
    y = [1, 0, 1, 0, 1, 0, 0, 1, 1, 1]
    x = [[0.1 * (m % 3) - 0.1, 0.05 * (m % 2)] for m in range(10)]
    found = candidate_style_control(["c0", "c1", "c2"], first, second, y, x, COVARIATES, range(10))
    assert found.problem is not None
    assert "separated" in found.problem
    assert found.separation in ("quasi", "complete")
    assert "c1" in found.separated_terms or "c2" in found.separated_terms
    assert all(math.isnan(s.strength.estimate) for s in found.strengths)
    assert found.order() == ()


def test_candidates_never_compared_with_the_rest_have_no_common_scale() -> None:
    first, second = [0, 1, 0, 1, 2, 3, 2, 3], [1, 0, 1, 0, 3, 2, 3, 2]
    y = [1, 1, 0, 0, 1, 0, 1, 1]
    x = [[0.1 * m - 0.3, 0.0] for m in range(8)]
    found = candidate_style_control(list("abcd"), first, second, y, x, COVARIATES, range(8))
    assert found.problem is not None
    assert "one scale" in found.problem


def test_a_covariate_that_never_differs_is_left_out_and_the_rest_is_bradley_terry() -> None:
    rng = np.random.default_rng(5)
    n = 300
    first = rng.integers(0, 3, n)
    second = (first + rng.integers(1, 3, n)) % 3
    s = np.array([0.5, 0.0, -0.5])
    y = (rng.random(n) < 1 / (1 + np.exp(-(s[first] - s[second])))).astype(int)
    x = np.zeros((n, 2))
    found = candidate_style_control(["a", "b", "c"], first, second, y, x, COVARIATES, range(n))
    assert [t.status for t in found.terms] == ["no variation", "no variation"]
    # Without style terms it is the ranking's Bradley-Terry without ties.
    rows = [
        ("p", "abc"[i], "abc"[j], "abc"[i] if w else "abc"[j])
        for i, j, w in zip(first, second, y, strict=True)
    ]
    plain = rank_candidates(outcomes(["a", "b", "c"], rows), rng=None)
    expected = {c.candidate: c.strength.estimate for c in plain.strengths}
    for st in found.strengths:
        assert st.strength.estimate == pytest.approx(expected[st.candidate], abs=1e-7)


def test_bad_input_is_refused_with_a_value_error() -> None:
    with pytest.raises(ValueError, match="anchor"):
        candidate_style_control(
            ["a", "b"], [0], [1], [1], [[0.1, 0.0]], COVARIATES, [0], anchor="z"
        )
    with pytest.raises(ValueError, match="different candidate"):
        candidate_style_control(["a", "b"], [0], [0], [1], [[0.1, 0.0]], COVARIATES, [0])
    with pytest.raises(ValueError, match="only 0"):
        candidate_style_control(["a", "b"], [0], [1], [2], [[0.1, 0.0]], COVARIATES, [0])


# --------------------------------------------------------------------------- simulation


def _length_only_judge(
    rng: np.random.Generator, prompts: int
) -> tuple[list[str], Any, Any, Any, Any, Any]:
    """Four candidates of equal quality whose answers differ in length (typical words 100,
    150, 220, 320, varying per prompt), all pairs on every prompt, sides balanced; the judge
    prefers the longer answer only: logit P(left) = 2.5 x_length."""
    names = ["terse", "brief", "wordy", "verbose"]
    pairs = np.array([(i, j) for i in range(4) for j in range(i + 1, 4)])
    first = np.tile(pairs[:, 0], prompts)
    second = np.tile(pairs[:, 1], prompts)
    swap = rng.random(first.size) < 0.5
    first, second = np.where(swap, second, first), np.where(swap, first, second)
    prompt = np.repeat(np.arange(prompts), len(pairs))
    words = np.array([100.0, 150.0, 220.0, 320.0])[None, :] * rng.lognormal(0.0, 0.3, (prompts, 4))
    marks = rng.gamma(2.0, 1.0, (prompts, 4))
    left_words, right_words = words[prompt, first], words[prompt, second]
    left_marks, right_marks = marks[prompt, first], marks[prompt, second]
    x = np.column_stack(
        [
            (left_words - right_words) / (left_words + right_words),
            (left_marks - right_marks) / (left_marks + right_marks),
        ]
    )
    y = (rng.random(first.size) < 1.0 / (1.0 + np.exp(-2.5 * x[:, 0]))).astype(int)
    return names, first, second, y, x, prompt


def test_length_only_judge_separates_the_raw_ranking_not_the_style_controlled() -> None:
    rng = np.random.default_rng(20261203)
    names, first, second, y, x, prompt = _length_only_judge(rng, 60)
    rows = [
        (f"p{q}", names[i], names[j], names[i] if w else names[j])
        for q, i, j, w in zip(prompt, first, second, y, strict=True)
    ]
    raw = rank_candidates(outcomes(names, rows), rng=IndexStream("style-sim", "ranking"))
    assert next(s.candidate for s in raw.strengths) == "verbose"
    assert len(raw.groups) > 1  # the raw ranking separates them (by length)
    found = candidate_style_control(names, first, second, y, x, COVARIATES, prompt)
    assert found.problem is None
    for s in found.strengths:  # equal quality: every interval holds the mean, 0
        assert s.strength.lo < 0.0 < s.strength.hi
    length = found.terms[0]
    assert length.coefficient.lo < 2.5 < length.coefficient.hi
    assert length.coefficient.lo > 0.0


def test_prompt_clustered_wald_intervals_cover_equal_strengths_about_95_percent() -> None:
    # 200 seeded replicates of the length-only judge: each candidate's interval should hold
    # its true strength (0) in about 95% of them; about 800 intervals, so 0.92-0.98 is a wide
    # margin (binomial sd 0.8 points). A strength without a number (the longest candidate
    # longer in every comparison of a replicate: once in these 200) holds nothing and is not
    # counted; the others are anchored at their own mean, which is still 0.
    rng = np.random.default_rng(11)
    covered = total = 0
    for _ in range(200):
        names, first, second, y, x, prompt = _length_only_judge(rng, 30)
        found = candidate_style_control(names, first, second, y, x, COVARIATES, prompt)
        assert found.problem is None
        given = [s for s in found.strengths if s.status == "estimated"]
        covered += sum(s.strength.lo < 0.0 < s.strength.hi for s in given)
        total += len(given)
    assert total >= 790
    assert 0.92 <= covered / total <= 0.98


def test_the_fast_separation_check_agrees_with_the_two_sided_linear_programme() -> None:
    # Stiemke's alternative (p rows) first, the sparse Konis programme only when separated:
    # over 120 seeded small designs, many of them separated, the status, the comparisons
    # decided and the infinite terms are those of the two-sided Konis programme run alone.
    from blindtest.stats import style
    from blindtest.stats.candidate_style import _separation

    rng = np.random.default_rng(2026)
    seen = set()
    for _ in range(120):
        n = int(rng.integers(6, 25))
        first = rng.integers(0, 3, n)
        second = (first + rng.integers(1, 3, n)) % 3
        z = np.zeros((n, 2))
        for col, m in enumerate((1, 2)):
            z[:, col] = (first == m).astype(float) - (second == m).astype(float)
        z = np.column_stack([z, np.tanh(rng.normal(0.0, 0.6, n))])
        if np.linalg.matrix_rank(z) < 3:
            continue
        s = np.array([0.0, *rng.normal(0.0, 3.0, 2)])
        eta = s[first] - s[second] + 4.0 * z[:, 2]
        y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
        names = ["b", "c", "length"]
        status, decided, terms = _separation(z, y, names)
        signed, scaled = style._signed_and_scaled(z, y)
        dense = style._konis(scaled, names, style._single_separators(signed, names))
        assert status == dense.status
        assert decided == dense.determined
        assert set(terms) == set(dense.terms)
        seen.add(status)
    assert seen == {"none", "quasi", "complete"}


def test_picks_that_follow_length_exactly_name_it() -> None:
    # Every pick went to the longer answer: complete separation by length alone.
    rng = np.random.default_rng(8)
    n = 60
    first = rng.integers(0, 3, n)
    second = (first + rng.integers(1, 3, n)) % 3
    x = np.column_stack([rng.uniform(-0.5, 0.5, n), rng.uniform(-0.5, 0.5, n)])
    y = (x[:, 0] > 0).astype(int)
    found = candidate_style_control(list("abc"), first, second, y, x, COVARIATES, range(n))
    assert found.separation == "complete"
    assert found.separated_by == (("length", 1),)
    assert found.problem is not None
    assert "separated" in found.problem


def test_a_line_says_the_picks_follow_length_exactly() -> None:
    from blindtest.analysis.style import candidate_style_lines

    rng = np.random.default_rng(9)
    n = 40
    first = rng.integers(0, 3, n)
    second = (first + rng.integers(1, 3, n)) % 3
    x = np.column_stack([rng.uniform(-0.5, 0.5, n), np.zeros(n)])
    y = (x[:, 0] < 0).astype(int)
    found = candidate_style_control(list("abc"), first, second, y, x, COVARIATES, range(n))
    (line,) = candidate_style_lines(found, ["a", "b", "c"])
    assert "the picks follow style exactly" in line
    assert "went to the shorter answer" in line


def test_results_are_frozen_slotted_and_json_ready() -> None:
    import dataclasses

    found, _ = _fit_case("four", "mean")
    separated = candidate_style_control(
        ["a", "b"], [0, 1, 0], [1, 0, 1], [1, 0, 1], [[0.1, 0.0]] * 3, COVARIATES, [0, 1, 2]
    )
    for result in (found, separated, found.strengths[0], found.terms[0], found.differences[0]):
        assert not hasattr(result, "__dict__")
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.__setattr__(dataclasses.fields(result)[0].name, None)
        json.dumps(result.to_dict(), allow_nan=False)


# --------------------------------------------------------------------------- extrapolation


def _one_always_longer(
    rng: np.random.Generator, prompts: int, k: int = 4
) -> tuple[list[str], Any, Any, Any, Any, Any]:
    """k candidates on every prompt, every pair, sides at random; the last one's answer is
    longer than every other answer on its prompt (so in every comparison it is in), the rest
    vary around one length; the judge weighs strength and length."""
    names = [f"c{m}" for m in range(k)]
    pairs = np.array([(a, b) for a in range(k) for b in range(a + 1, k)])
    first = np.tile(pairs[:, 0], prompts)
    second = np.tile(pairs[:, 1], prompts)
    swap = rng.random(first.size) < 0.5
    first, second = np.where(swap, second, first), np.where(swap, first, second)
    prompt = np.repeat(np.arange(prompts), len(pairs))
    words = 150.0 * rng.lognormal(0.0, 0.3, (prompts, k))
    words[:, -1] = 1.3 * words[:, :-1].max(axis=1)
    marks = rng.gamma(2.0, 1.0, (prompts, k))
    wl, wr = words[prompt, first], words[prompt, second]
    ml, mr = marks[prompt, first], marks[prompt, second]
    x = np.column_stack([(wl - wr) / (wl + wr), (ml - mr) / (ml + mr)])
    s = np.linspace(0.4, -0.4, k)
    eta = s[first] - s[second] + 1.5 * x[:, 0]
    y = (rng.random(first.size) < 1.0 / (1.0 + np.exp(-eta))).astype(int)
    return names, first, second, y, x, prompt


@pytest.mark.parametrize("k", [3, 4])
def test_a_candidate_longer_in_every_comparison_has_no_strength_and_moves_no_other(
    k: int,
) -> None:
    # Equal style lies outside the last candidate's comparisons: its strength at equal style
    # would extrapolate, so it has none, and the mean anchor is the others' mean (its
    # extrapolated value would otherwise shift every other strength).
    names, first, second, y, x, prompt = _one_always_longer(np.random.default_rng(34), 20, k)
    found = candidate_style_control(names, first, second, y, x, COVARIATES, prompt)
    assert found.problem is None
    last = found.strengths[-1]
    assert last.status == "extrapolated"
    assert found.extrapolated == (names[-1],)
    assert math.isnan(last.strength.estimate)
    assert math.isnan(last.se)
    assert last.confounded == (("length", 1),)
    assert last.comparisons == 20 * (k - 1)
    mine = (first == k - 1) & (y == 1) | (second == k - 1) & (y == 0)
    assert last.wins == int(mine.sum())
    rest = found.strengths[:-1]
    assert all(s.status == "estimated" and s.confounded == () for s in rest)
    assert sum(s.strength.estimate for s in rest) == pytest.approx(0.0, abs=1e-12)
    assert set(found.order()) == set(names[:-1])
    pairs = {(d.first, d.second) for d in found.differences}
    assert pairs == {(a, b) for n_a, a in enumerate(names[:-1]) for b in names[n_a + 1 : -1]}
    assert all(math.isfinite(d.difference.lo) for d in found.differences)
    # The differences the data support are those of the plain fit with a reference: the same
    # fit, only anchored where no extrapolated value enters.
    ref = candidate_style_control(names, first, second, y, x, COVARIATES, prompt, anchor="c0")
    given = {s.candidate: s.strength.estimate for s in rest}
    for s in ref.strengths[:-1]:
        assert s.strength.estimate == pytest.approx(given[s.candidate] - given["c0"], abs=1e-9)
    json.dumps(found.to_dict())


def test_a_reference_whose_strength_is_extrapolated_gives_way_to_the_others_mean() -> None:
    names, first, second, y, x, prompt = _one_always_longer(np.random.default_rng(35), 20)
    found = candidate_style_control(
        names, first, second, y, x, COVARIATES, prompt, anchor=names[-1]
    )
    assert found.anchor == "mean"
    assert found.strengths[-1].status == "extrapolated"
    assert sum(s.strength.estimate for s in found.strengths[:-1]) == pytest.approx(0.0, abs=1e-12)


def test_lengths_in_one_order_on_every_prompt_leave_no_strength_to_compare() -> None:
    # c0 always longest, c2 always shortest: both extrapolated; c1 alone has no other
    # strength to be set against, so none is given and there is no order.
    rng = np.random.default_rng(36)
    names, first, second, _, x, prompt = _one_always_longer(rng, 20, 3)
    words = np.sort(150.0 * rng.lognormal(0.0, 0.3, (20, 3)), axis=1)[:, ::-1]
    wl, wr = words[prompt, first], words[prompt, second]
    x = np.column_stack([(wl - wr) / (wl + wr), x[:, 1]])
    y = (rng.random(first.size) < 1.0 / (1.0 + np.exp(-x[:, 0]))).astype(int)
    found = candidate_style_control(names, first, second, y, x, COVARIATES, prompt)
    assert found.problem is None
    assert [s.status for s in found.strengths] == ["extrapolated", "not estimated", "extrapolated"]
    assert all(math.isnan(s.strength.estimate) for s in found.strengths)
    assert found.order() == ()
    assert found.differences == ()
    assert [t.status for t in found.terms] == ["estimated", "estimated"]


def test_the_quick_inside_pass_never_contradicts_the_linear_programme() -> None:
    # A row in every open orthant puts equal style inside the hull: wherever the quick pass
    # says so, the linear programme agrees (it decides every other case).
    from blindtest.stats.candidate_style import _surely_inside
    from blindtest.stats.style import equal_style_outside

    rng = np.random.default_rng(37)
    said = 0
    for _ in range(300):
        rows = rng.normal(rng.normal(0.0, 1.0, 2), 1.0, (int(rng.integers(1, 12)), 2))
        if _surely_inside(rows):
            said += 1
            assert not equal_style_outside(rows)
    assert said > 30
    assert not _surely_inside(np.array([[0.5, 0.1], [0.2, -0.3], [-0.1, 0.4]]))


def test_the_lines_say_which_strengths_cannot_be_estimated_and_what_is_at_zero() -> None:
    from blindtest.analysis.style import candidate_style_lines

    names, first, second, y, x, prompt = _one_always_longer(np.random.default_rng(35), 20)
    found = candidate_style_control(
        names, first, second, y, x, COVARIATES, prompt, anchor=names[-1]
    )
    main, technical = (" ".join(line.split()) for line in candidate_style_lines(
        found, names, reference=names[-1]
    ))  # fmt: skip
    assert "of the candidates with a strength" in main
    assert (
        "c3's strength at equal style cannot be estimated: its answer was longer in every one "
        "of its 60 comparisons" in main
    )
    assert "The order and the strengths are of the other candidates." in main
    assert "the mean of the candidates with a strength at 0 in place of the reference c3" in (
        technical
    )
    assert "c3 cannot be estimated (no comparison at equal style)" in technical
