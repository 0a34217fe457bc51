"""The words of a preference result, for a person to act on. Two candidates: who won how many,
the win rate with its Wilson interval, the exact p and spec 002's verdict (and what hidden
controls say of it). From three: who is ahead and by how much (as a chance of being preferred),
which differences are real after Holm, each candidate against a reference, what each costs,
and, for a cheaper candidate the data cannot tell from the leader, what the interval
allows and the pre-registered decision that would settle it (never "adequate": not worse is
shown only against a margin fixed in the design). Every figure
comes from the pair tests and the ranking (`blindtest.analysis.preference` builds them). Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from blindtest.reportfmt import count, dollars, format_p, format_p_against, pct
from blindtest.stats.pairwise import PairTable
from blindtest.stats.preference import PreferenceResult
from blindtest.stats.ranking import Ranking
from blindtest.stats.sizing import decision_sample_size

if TYPE_CHECKING:
    from blindtest.analysis.controls import ControlsCheck

__all__ = ["pair_conclusion", "pair_statement", "prob", "ranking_headline"]


def _money(value: float | None) -> str:
    """Dollars as ``reportfmt.dollars`` writes them (``$0.093``, ``$0.40``)."""
    return "cost unknown" if value is None else dollars(value)


def _times(ratio: float) -> str:
    words = {2: "twice", 3: "three times", 4: "four times", 5: "five times", 10: "ten times"}
    rounded = round(ratio)
    if rounded in words and abs(ratio - rounded) < 0.05 * ratio:
        return f"{words[rounded]} as much"
    return f"{ratio:.1f} times as much"


def _p_words(d: float | None) -> str:
    return "?" if d is None or math.isnan(d) else pct(1.0 / (1.0 + math.exp(-d)))


def prob(d: float | None) -> float | None:
    if d is None or math.isnan(d):
        return None
    if math.isinf(d):
        return 1.0 if d > 0 else 0.0
    return 1.0 / (1.0 + math.exp(-d))


def _pair_key(a: str, b: str) -> frozenset[str]:
    return frozenset((a, b))


def _real_pairs(table: PairTable) -> dict[frozenset[str], Any]:
    return {_pair_key(r.first, r.second): r for r in table.pairs}


def _pair_result(record: Any, winner: str, alpha: float) -> str:
    """``won 12 to 8, 15 ties, Holm p = 0.50`` from ``winner``'s side; a p next to ``alpha``
    with the digits that keep it on its side (``p = 0.0498 < 0.05``, never ``0.050``)."""
    wins, losses = (
        (record.wins, record.losses) if winner == record.first else (record.losses, record.wins)
    )
    return (
        f"won {wins} to {losses}, {count(record.ties, 'tie')}, Holm-adjusted "
        f"{format_p_against(record.p_holm, alpha)}"
    )


def _difference(ranking: Ranking, a: str, b: str) -> tuple[float, float, float, bool]:
    """a minus b: estimate, simultaneous bounds, separated."""
    for d in ranking.differences:
        if (d.first, d.second) == (a, b):
            return d.difference.estimate, d.difference.lo, d.difference.hi, d.separated
    d = next(d for d in ranking.differences if (d.first, d.second) == (b, a))
    return -d.difference.estimate, -d.difference.hi, -d.difference.lo, d.separated


def _leader_lines(
    ranking: Ranking, met: Mapping[frozenset[str], Any], anchor: str, alpha: float
) -> list[str]:
    """Who is ahead, by how much as a chance of being preferred, and the groups."""
    order = [s.candidate for s in ranking.strengths]
    lines = [f"Ranking, strongest first: {', '.join(order)} (Bradley-Terry, {anchor} at 0)."]
    leader, second = order[0], order[1]
    est, lo, hi, separated = _difference(ranking, leader, second)
    bounds = (
        f"simultaneous 95% interval {pct(prob(lo))} to {pct(prob(hi))}"
        if math.isfinite(lo) and math.isfinite(hi)
        else "no bounded interval"
    )
    record = met.get(_pair_key(leader, second))
    direct = f"; when they met, {leader} {_pair_result(record, leader, alpha)}" if record else ""
    if not separated:
        verdict = "the data cannot separate the two, so the lead is not established."
    elif record is not None and not record.significant:
        verdict = (
            "the ranking, which draws on every comparison, separates the two, though their "
            "own meetings alone do not after Holm."
        )
    else:
        verdict = "the ranking separates the two."
    lines.append(
        f"{leader} is ahead: against {second}, the next, it is preferred in {_p_words(est)} "
        f"of the comparisons that are not ties ({bounds}{direct}); {verdict}"
    )
    groups = [g for g in ranking.groups if len(g) > 1]
    if groups:
        lines.append(
            "The data cannot separate "
            + "; nor ".join("{" + ", ".join(g) + "}" for g in groups)
            + " (simultaneous 95% intervals for every difference of strengths)."
        )
    else:
        lines.append("Every candidate is separated from the next (simultaneous 95%).")
    return lines


def _holm_lines(pairs: PairTable) -> list[str]:
    """Which pair tests are real after Holm."""
    real = [r for r in pairs.pairs if r.significant]
    family = f"{count(len(pairs.pairs), 'pair')} that met (alpha {pairs.alpha:g})"
    if not real:
        return [f"No pair differs after Holm across the {family}."] if pairs.pairs else []
    parts = []
    for r in real:
        winner, loser = (r.first, r.second) if r.wins > r.losses else (r.second, r.first)
        parts.append(f"{winner} over {loser} ({_pair_result(r, winner, pairs.alpha)})")
    rest = len(pairs.pairs) - len(real)
    tail = {0: ".", 1: "; the other pair is not shown to differ."}.get(
        rest, f"; the other {rest} pairs are not shown to differ."
    )
    return [f"Real differences after Holm across the {family}: " + "; ".join(parts) + tail]


def _reference_lines(reference: PairTable) -> list[str]:
    ref = reference.family.removeprefix("against ")
    parts = []
    for r in reference.pairs:
        rate = (
            f"{pct(r.win_rate.estimate)} (Wilson 95% {pct(r.win_rate.lo)} to {pct(r.win_rate.hi)})"
            if r.n
            else "undefined (only ties)"
        )
        flag = ", a real difference" if r.significant else ""
        p = format_p_against(r.p_holm, reference.alpha)
        parts.append(f"{r.first} {rate}, Holm-adjusted {p}{flag}")
    return [
        f"Against the reference {ref}, each candidate's share of the untied comparisons: "
        + "; ".join(parts)
        + "."
    ]


def ranking_headline(
    ranking: Ranking | None,
    pairs: PairTable,
    reference: PairTable | None,
    spend: Mapping[str, Mapping[str, Any]],
    anchor: str,
) -> list[str]:
    """The ranking in words a person acts on: who is ahead and by how much, which differences
    are real, what each costs, and what the data allow of a cheaper candidate they cannot
    tell from the leader."""
    lines: list[str] = []
    met = _real_pairs(pairs)
    ranked = ranking is not None and ranking.problem is None
    if ranking is not None and ranking.problem is None:
        lines += _leader_lines(ranking, met, anchor, pairs.alpha)
    elif ranking is not None:
        lines.append(f"No ranking: {ranking.problem}.")
    # With a reference every pair that met holds it: the reference's table says it all.
    lines += _holm_lines(pairs) if reference is None else _reference_lines(reference)
    costs = {n: s["cost_per_answer"] for n, s in spend.items() if s["cost_per_answer"]}
    if costs:
        names = [s.candidate for s in ranking.strengths] if ranking and ranked else list(spend)
        shown = [f"{n} {_money(1000 * costs[n]) if n in costs else 'unknown'}" for n in names]
        lines.append("Cost per 1,000 answers: " + ", ".join(shown) + ".")
        lines += _within_reach(ranking, met, costs, pairs.alpha)
    return lines


def _within_reach(
    ranking: Ranking | None,
    met: Mapping[frozenset[str], Any],
    costs: Mapping[str, float],
    alpha: float,
) -> list[str]:
    """A cheaper candidate that met the leader and that the data cannot tell from it (the
    Holm-adjusted pair test does not reach alpha, and the ranking's simultaneous interval for
    the difference is bounded and holds 0): what the interval allows (how often the leader
    may be preferred), never "adequate" or "not worse", which only a margin fixed in the
    design can show; and the pre-registered decision that would settle it, with the n it
    needs at a true share of 1/2 and this run's tie rate. Candidates that never met the
    leader, or whose difference the data cannot bound, get no such sentence."""
    if ranking is None or ranking.problem is not None:
        return []
    order = [s.candidate for s in ranking.strengths]
    leader = order[0]
    if leader not in costs:
        return []
    close = []
    for name in order[1:]:
        record = met.get(_pair_key(leader, name))
        if name not in costs or costs[name] >= costs[leader] or record is None:
            continue
        _, lo, hi, separated = _difference(ranking, leader, name)
        if record.n and not record.significant and not separated and math.isfinite(lo + hi):
            close.append((name, record, lo, hi))
    if not close:
        return []
    name, record, lo, hi = min(close, key=lambda c: (costs[c[0]], order.index(c[0])))
    ties = record.ties / max(1, record.wins + record.losses + record.ties)
    return [
        f"The data cannot tell the cheaper {name} from the leader {leader} ({leader} "
        f"{_pair_result(record, leader, alpha)}): they allow {leader} to be preferred in up to "
        f"{pct(prob(hi))} of the untied comparisons between them (and in as few as "
        f"{pct(prob(lo))}), and {leader} costs {_times(costs[leader] / costs[name])} per "
        f"answer. That is not a finding that {name} is not worse: only a margin fixed in the "
        f"design can show that. {_settle_line(leader, name, ties)}"
    ]


#: The margin the suggested decision names: 5 points of the untied share.
SUGGESTED_MARGIN = 0.05


def _settle_line(leader: str, name: str, ties: float) -> str:
    """The pre-registered design that would settle whether ``name`` is not worse than
    ``leader``, and the n it needs at a true share of 1/2 and the observed tie rate."""
    size = decision_sample_size(
        "noninferior", SUGGESTED_MARGIN, true=0.5, ties=min(ties, 0.95), power=0.8
    )
    design = (
        f"a new design (bt-design with `--pairs reference:{leader} --decide "
        f"noninferior:{SUGGESTED_MARGIN:g} --sensitivity 20`)"
    )
    if size.smallest_n is None:
        return f"To decide it, pre-register the margin in {design}."
    return (
        f"To decide it, pre-register the margin in {design}: at a true share of 1/2 and this "
        f"run's tie rate ({pct(ties)}), {size.smallest_n:,} comparisons of {name} against "
        f"{leader} show it with power 0.8."
    )


# --------------------------------------------------------------------------- two candidates


def excluded_words(section: Mapping[str, Any]) -> str:
    """``2 excluded (1 identity leakage, 1 position-inconsistent; neither wins nor ties)``."""
    reasons = {
        "identity_leakage": "identity leakage",
        "position_inconsistent": "position-inconsistent",
    }
    parts = [f"{k} {reasons.get(r, r)}" for r, k in section["by_reason"].items()]
    return f"{section['n']} excluded ({', '.join(parts)}; neither wins nor ties)"


def pair_statement(
    result: PreferenceResult,
    names: tuple[str, str],
    shown: Mapping[str, str],
    excluded: Mapping[str, Any] | None,
) -> str:
    """Two candidates' counts, the first's win rate with its Wilson interval and the exact p
    (``shown``: the names the report shows, ``A (label)`` for a side of a two-sided design)."""
    first, second = (shown[name] for name in names)
    rate = (
        f"{names[0]}'s win rate {pct(result.win_rate.estimate)} (Wilson 95% "
        f"{pct(result.win_rate.lo)} to {pct(result.win_rate.hi)})"
        if result.n
        else f"{names[0]}'s win rate undefined: no untied comparison"
    )
    left_out = f"; {excluded_words(excluded)}" if excluded is not None else ""
    return (
        f"{first} won {result.wins}, {second} won {result.losses}, {result.ties} ties (ties "
        f"excluded from the win rate){left_out}. {rate}, exact two-sided "
        f"{format_p(result.p_value)}. "
    )


def pair_conclusion(
    result: PreferenceResult,
    first: str,
    second: str,
    judged: int,
    *,
    controls: ControlsCheck | None = None,
) -> tuple[str, str, bool]:
    """(verdict, the headline's closing words, whether the hidden controls held a directional
    verdict back): the test's conclusion, then what the controls say; ``judged`` counts the
    comparisons with an outcome (for the tie rate)."""
    verdict = {"better": f"{first} preferred", "worse": f"{second} preferred"}.get(
        result.verdict, "inconclusive"
    )
    favoured = {"better": first, "worse": second}.get(result.verdict)
    held = favoured is not None and controls is not None and bool(controls.indistinguishable)
    tie_rate = result.ties / judged if judged else 0.0
    if result.verdict == "inconclusive":
        reason = (
            "the margin is smaller than two tasks"
            if not result.margin_ok
            else "the Wilson interval and the exact test do not both exclude 1/2"
        )
        words = f"Inconclusive: {reason}."
        if tie_rate >= 1 / 4:
            # Said only when the ties are many: wording follows the numbers.
            words += f" The tie rate ({pct(tie_rate)}) is itself a finding."
    elif held:
        words = (
            f"Inconclusive: the interval and the exact test favour {favoured} (margin "
            f"{result.margin}), but the hidden controls do not back it."
        )
        verdict = "inconclusive"
    else:
        words = f"Verdict: {verdict} (interval and exact test agree, margin {result.margin})."
    if controls is not None:
        words += " " + controls.headline(favoured if held else None)
    return verdict, words, held
