"""An LLM judge's diagnostics count comparisons, not passes; a judge that answers by position
fails a preference run with the position swap and without it (its position gate over its
comparisons, every pass as shown, with the margin), and one that leans within reach of it is
warned about; ``--inconsistent exclude`` leaves comparisons out instead of making them ties.
Reference values by exact enumeration (Fractions) and scipy.stats.binomtest; sizes by seeded
vectorised simulation (the gate's own size over comparisons: tests/stats)."""

from __future__ import annotations

from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson
import pytest
from scipy import stats

from blindtest.analysis.llm_diagnostics import Consistency, PositionSplit, Share, diagnose
from blindtest.simulator import Simulator
from blindtest.stats.position import position_gate

from llm_runs import llm, make_run
from screen_text import flat

ALPHA = 0.05


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDTEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _two_sided(k: int, n: int, p: Fraction) -> Fraction:
    """Exact two-sided binomial p-value by enumeration (outcomes no more likely than k)."""
    probs = [comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(n + 1)]
    return sum((q for q in probs if q <= probs[k]), Fraction(0))


@pytest.mark.parametrize(
    ("k", "n", "chance"),
    [
        (9, 12, Fraction(1, 2)),
        (7, 12, Fraction(1, 3)),
        (0, 5, Fraction(1, 2)),
        (20, 20, Fraction(1, 2)),
    ],
)
def test_share_p_value_and_interval_match_enumeration_and_scipy(
    k: int, n: int, chance: Fraction
) -> None:
    share = Share(k, n, float(chance))
    assert share.p_value == pytest.approx(float(_two_sided(k, n, chance)), rel=1e-9)
    exact = stats.binomtest(k, n, float(chance)).proportion_ci(0.95, method="exact")
    found = share.to_dict()
    assert found["interval"]["lo"] == pytest.approx(exact.low, rel=1e-9, abs=1e-15)
    assert found["interval"]["hi"] == pytest.approx(exact.high, rel=1e-9)
    assert found["estimate"] == k / n
    assert Share(0, 0, 0.5).to_dict()["interval"] is None


def _swapped(trial: int, first: str, second: str) -> list[dict[str, Any]]:
    """A swapped comparison's two records from its raw verdicts (pass 2 shows right first)."""
    own = {"A": "left", "B": "right", "TIE": "tie"}
    back = {"A": "right", "B": "left", "TIE": "tie"}
    return [
        {"trial": trial, "pass": 1, "verdict": first, "pass_pick": own[first]},
        {"trial": trial, "pass": 2, "verdict": second, "pass_pick": back[second]},
    ]


def test_a_swapped_comparison_counts_once_for_length_and_markdown() -> None:
    # 20 comparisons, both passes choosing the longer (and more marked) right output.
    options = {t: ("short", "a much longer answer\n- with a bullet") for t in range(1, 21)}
    rows = [r for t in range(1, 21) for r in _swapped(t, "B", "A")]
    found = diagnose("j", "preference", rows, [], options, {})
    assert found.longer is not None
    assert found.markdown is not None
    assert (found.longer.k, found.longer.n) == (20, 20)  # per pass it was 40 of 40
    assert (found.markdown.k, found.markdown.n) == (20, 20)
    assert found.longer.p_value == pytest.approx(float(_two_sided(20, 20, Fraction(1, 2))))
    assert found.to_dict()["p_longer"]["unit"] == (
        "comparisons whose two passes chose the same output"
    )


def test_swap_consistency_has_an_exact_interval_and_no_p_value() -> None:
    rows = _swapped(1, "A", "A") + _swapped(2, "B", "A") + _swapped(3, "TIE", "TIE")
    found = diagnose("j", "preference", rows, [], {}, {})
    assert found.consistent == Consistency(2, 3)
    shown = found.to_dict()["swap_consistency"]
    assert set(shown) == {"k", "n", "estimate", "interval"}
    exact = stats.binomtest(2, 3).proportion_ci(0.95, method="exact")
    assert shown["interval"]["lo"] == pytest.approx(exact.low, rel=1e-9)
    assert shown["interval"]["hi"] == pytest.approx(exact.high, rel=1e-9)


def test_position_is_the_split_of_the_inconsistent_comparisons_with_a_sign_test() -> None:
    rows = (
        _swapped(1, "A", "A")  # first, first: went with the first position
        + _swapped(2, "A", "A")
        + _swapped(3, "A", "A")
        + _swapped(4, "B", "B")  # went with the second position
        + _swapped(5, "A", "TIE")  # inconsistent through a tie: neither
        + _swapped(6, "B", "A")  # consistent: the right output both times
    )
    found = diagnose("j", "preference", rows, [], {}, {})
    shown = found.to_dict()["position"]
    assert (shown["comparisons"], shown["inconsistent"]) == (6, 5)
    assert (shown["first"], shown["second"]) == (3, 1)
    assert shown["p_value"] == pytest.approx(float(_two_sided(3, 4, Fraction(1, 2))))  # 0.625
    assert shown["share_first"]["estimate"] == 0.75
    assert shown["lean"] == pytest.approx(2 / 6)
    assert shown["exceeds_limit"] is False
    # The judge's gate counts every pass as shown: trials 1-3 left twice (share 1), trial 4
    # right twice (0), trial 5 left and a tie (1), trial 6 right then left (1/2).
    gate = shown["gate"]
    assert (gate["comparisons"], gate["left"], gate["right"]) == (6, 8, 3)
    assert gate["share"]["estimate"] == pytest.approx((1 + 1 + 1 + 0 + 1 + 0.5) / 6)
    # Without the swap, each comparison's one verdict says first or second.
    one = diagnose("j", "preference", [{"trial": t, "verdict": "A"} for t in range(1, 7)], [],
                   {}, {})  # fmt: skip
    assert one.position == PositionSplit(False, 6, None, 6, 0)
    # 6 of 6 first: shown (p = 2/64 = 0.03125), but its 95% interval (Clopper-Pearson, from
    # 54.1%) reaches inside 55%: a lean warned about, not a failed gate.
    assert one.position_gate is not None
    assert (one.position_gate.verdict, one.position_gate.significant) == ("warn", True)
    assert one.position_gate.share.lo == pytest.approx(0.025 ** (1 / 6))
    assert one.warnings[0].startswith("position bias: of 6 comparisons (one pass each, no swap)")


def test_a_judge_taking_the_first_output_on_a_fifth_of_its_passes_is_warned_or_failed() -> None:
    # A judge otherwise consistent that takes the first output on 20% of passes, over 30
    # comparisons: both passes name the first output in K ~ Bin(30, 0.2) comparisons (left
    # share 1), the rest agree (1/2): its left share is 0.6, beyond the 5-point margin. Exact
    # by enumeration over K: the sign-flip test shows the lean from K = 6 (p = 2 / 2^K), so the
    # judge is warned about or failed in about 57% of runs (the per-pass test flagged it 12%);
    # the gate fails it only once its interval clears 55%, from K = 12 (1% of runs at 30
    # comparisons; 13% at 100, 46% at 200, 78% at 300: the margin's price).
    b, n = Fraction(1, 5), 30
    found = {k: position_gate([2] * k + [1] * (n - k), [0] * k + [1] * (n - k)) for k in
             range(n + 1)}  # fmt: skip

    def chance(ks: list[int]) -> Fraction:
        return sum((comb(n, k) * b**k * (1 - b) ** (n - k) for k in ks), Fraction(0))

    shown = [k for k, g in found.items() if g.verdict == "fail" or g.significant]
    failed = [k for k, g in found.items() if g.verdict == "fail"]
    assert shown == list(range(6, n + 1))
    assert failed == list(range(12, n + 1))
    assert float(chance(shown)) == pytest.approx(0.5725, abs=5e-4)
    assert float(chance(failed)) == pytest.approx(0.0095, abs=5e-4)


# --------------------------------------------------------------------------- sizes by simulation

REPLICATES = 20_000
#: The rate may exceed alpha by Monte Carlo noise only (3 standard errors at alpha).
NOISE = 3 * (ALPHA * (1 - ALPHA) / REPLICATES) ** 0.5


def _rate(k: npt.NDArray[np.int64], n: npt.NDArray[np.int64], test: Any) -> float:
    """Share of replicates where ``test(k, n)`` rejects, asked once per distinct (k, n)."""
    pairs, where = np.unique(np.stack([k, n], axis=1), axis=0, return_inverse=True)
    rejects = np.array([bool(test(int(a), int(m))) for a, m in pairs])
    return float(rejects[where.ravel()].mean())


def _share_rejects(k: int, n: int) -> bool:
    p = Share(k, n, 0.5).p_value
    return p is not None and p <= ALPHA


def _passes(rng: np.random.Generator, n: int, consistent: bool) -> tuple[Any, Any]:
    """Two passes per comparison of a position-blind judge: 0 picks output X, 1 output Y,
    2 a tie (10% per pass); X's pull q ~ U(0, 1) per comparison. ``consistent``: the second
    pass repeats the first (the judge knows its mind)."""
    q = rng.random((REPLICATES, n))

    def one() -> npt.NDArray[np.int64]:
        u = rng.random((REPLICATES, n))
        return np.where(u < 0.1, 2, np.where(rng.random((REPLICATES, n)) < q, 0, 1))

    first = one()
    return first, first.copy() if consistent else one()


@pytest.mark.parametrize("n", [20, 50, 200])
@pytest.mark.parametrize("consistent", [False, True])
def test_position_split_sign_test_size_at_or_under_alpha_with_and_without_swap(
    n: int, consistent: bool
) -> None:
    rng = np.random.default_rng([3, n, consistent])
    one, two = _passes(rng, n, consistent)
    # Pass 1 shows X first, pass 2 shows Y first: both passes named the first output when
    # pass 1 chose X and pass 2 chose Y.
    first = ((one == 0) & (two == 1)).sum(axis=1)
    second = ((one == 1) & (two == 0)).sum(axis=1)
    sign = _rate(first, first + second, _share_rejects)
    assert sign <= ALPHA + NOISE
    # Without the swap: X is shown first in a seeded half of the comparisons.
    x_first = rng.random((REPLICATES, n)) < 0.5
    named_first = ((one == 0) & x_first) | ((one == 1) & ~x_first)
    untied = (one != 2).sum(axis=1)
    k = (named_first & (one != 2)).sum(axis=1)
    assert _rate(k, untied, _share_rejects) <= ALPHA + NOISE


@pytest.mark.parametrize("n", [20, 50, 200])
@pytest.mark.parametrize("consistent", [False, True])
def test_length_and_markdown_tests_size_at_or_under_alpha_per_comparison(
    n: int, consistent: bool
) -> None:
    rng = np.random.default_rng([5, n, consistent])
    one, two = _passes(rng, n, consistent)
    agreed = (one == two) & (one != 2)
    for unique in (1.0, 0.6):  # length: one output always longer; markdown: often a draw
        has = rng.random((REPLICATES, n)) < unique
        x_top = rng.random((REPLICATES, n)) < 0.5  # which output is longer, blind to the judge
        counted = agreed & has
        k = (counted & ((one == 0) == x_top)).sum(axis=1)
        assert _rate(k, counted.sum(axis=1), _share_rejects) <= ALPHA + NOISE
    if consistent and n == 20:
        # Each untied pass counted as a verdict of its own (the old unit): the same judge is
        # flagged far more often than alpha (about 0.126).
        passes = np.concatenate([one, two], axis=1)
        x_top2 = np.concatenate([x_top, x_top], axis=1)
        untied = passes != 2
        k_old = (untied & ((passes == 0) == x_top2)).sum(axis=1)
        assert _rate(k_old, untied.sum(axis=1), _share_rejects) > 0.1


def test_diagnose_counts_what_the_simulation_counts() -> None:
    # One simulated replicate through diagnose: the same first, second and agreed counts.
    rng = np.random.default_rng(11)
    verdicts = rng.choice(["A", "B", "TIE"], size=(40, 2), p=[0.45, 0.45, 0.1])
    rows = [r for t, (a, b) in enumerate(verdicts, 1) for r in _swapped(t, str(a), str(b))]
    found = diagnose("j", "preference", rows, [], {}, {})
    assert found.position is not None
    assert found.position.first == sum(a == b == "A" for a, b in verdicts)
    assert found.position.second == sum(a == b == "B" for a, b in verdicts)


# --------------------------------------------------------------------------- end to end


@pytest.fixture
def run(invoke: Any, simulator: Simulator, tmp_path: Path) -> Path:
    return make_run(invoke, simulator.base_url, tmp_path / "run", "preference", trials=20)


def _analysed(invoke: Any, run: Path, picks: Path) -> tuple[int, dict[str, Any], str]:
    result = invoke("analyze", run, "--picks", picks, "--force")
    return result.exit_code, orjson.loads((run / "report.json").read_bytes()), flat(result.stdout)


@pytest.mark.parametrize("swap", [[], ["--no-swap"]])
def test_always_first_judge_is_not_a_result_with_or_without_the_swap(
    invoke: Any, simulator: Simulator, run: Path, swap: list[str]
) -> None:
    picks = run / "first.jsonl"
    judged = llm(invoke, run, "sim-judge-first", "--out", picks, *swap, url=simulator.base_url)
    assert judged.exit_code == 0, judged.output
    code, report, _ = _analysed(invoke, run, picks)
    assert code == 1
    assert report["verdict"] == "unusable"
    assert report["summary"]["verdict"].startswith(
        "Not a result: position bias: the LLM judge 'sim-judge-first' answered by position"
    )
    assert len([g for g in report["gates_failed"] if g.startswith("position bias")]) == 1
    (found,) = report["llm_judges"]["judges"]
    assert found["position"]["first"] == 20
    assert found["position"]["exceeds_limit"] is True
    assert invoke("verify", run).exit_code == 0  # bt-verify recomputes the gate


def test_inconsistent_exclude_counts_excluded_comparisons_not_ties(
    invoke: Any, simulator: Simulator, run: Path
) -> None:
    tied, left_out = run / "tie.jsonl", run / "exclude.jsonl"
    for out, how in ((tied, "tie"), (left_out, "exclude")):
        judged = llm(invoke, run, "sim-judge-first", "--out", out, "--inconsistent", how,
                     url=simulator.base_url)  # fmt: skip
        assert judged.exit_code == 0, judged.output
    _, as_ties, _ = _analysed(invoke, run, tied)
    _, excluded, _ = _analysed(invoke, run, left_out)
    assert (as_ties["ties"], as_ties["excluded"]) == (20, None)
    assert excluded["ties"] == 0
    assert excluded["excluded"]["n"] == 20
    assert excluded["excluded"]["by_reason"] == {"position_inconsistent": 20}
    assert excluded["excluded"]["trials_left_out"] == list(range(1, 21))
    assert any(g.startswith("excluded: every comparison was left out") for g in
               excluded["gates_failed"])  # fmt: skip
    assert {r.get("excluded") for r in excluded["per_trial"]} == {"position_inconsistent"}
    assert invoke("verify", run).exit_code == 0


def test_a_fair_judge_excluding_some_comparisons_still_finishes_the_design(
    invoke: Any, simulator: Simulator, run: Path
) -> None:
    tied, left_out = run / "tie.jsonl", run / "exclude.jsonl"
    for out, how in ((tied, "tie"), (left_out, "exclude")):
        judged = llm(invoke, run, "sim-judge-fair", "--out", out, "--inconsistent", how,
                     url=simulator.base_url)  # fmt: skip
        assert judged.exit_code == 0, judged.output
    _, as_ties, _ = _analysed(invoke, run, tied)
    code, excluded, screen = _analysed(invoke, run, left_out)
    assert code == 0
    assert excluded["verdict"] != "void"
    dropped = (excluded["excluded"] or {}).get("n", 0)
    inconsistent = as_ties["llm_judges"]["judges"][0]["position"]["inconsistent"]
    assert dropped == inconsistent
    assert as_ties["ties"] - excluded["ties"] == dropped
    assert excluded["n"] == 20 - dropped
    if dropped:
        assert f"{dropped} excluded (" in excluded["statement"]
        assert "excluded by the LLM judge (neither wins nor ties)" in screen
