"""The words of a preference result, for a person to act on. Two candidates: who won how many,
the win rate with its Wilson interval, the exact p and spec 002's verdict. From three, spoken
from the separations only (exact pair tests, Holm over the ordered pairs:
`blindtest.stats.separation`), never from the point estimates: which candidates may be the
best (the best set), which are shown ahead of which, the ranks the data allow, which fit gave
the strengths, each candidate against a reference, what each costs, and, for a cheaper
candidate the data cannot tell from the highest estimate, what the data allow and the
pre-registered decision that would settle it (never "adequate": only a margin fixed before
the data shows that). Every figure comes from the separations, the pair tests and the ranking
(`blindtest.analysis.preference` builds them). Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from blindtest.reportfmt import count, dollars, format_p, format_p_against, pct
from blindtest.stats.pairwise import PairRecord, PairTable
from blindtest.stats.preference import PreferenceResult
from blindtest.stats.ranking import FIRTH_WORDS, FIT_FIRTH, Ranking
from blindtest.stats.separation import Separations, separable_after
from blindtest.stats.sizing import decision_sample_size

__all__ = [
    "SUGGESTED_MARGIN",
    "Setting",
    "fit_words",
    "interval_coverage",
    "pair_conclusion",
    "pair_statement",
    "prob",
    "ranking_headline",
]

#: The margin (points of the untied share) of the pre-registered decision the headline
#: suggests for a cheaper candidate the data cannot tell from the highest estimate.
SUGGESTED_MARGIN = 0.05
#: The power that decision is sized for, and the planted comparisons it suggests.
SUGGESTED_POWER = 0.8
SUGGESTED_SENSITIVITY = 20


@dataclass(frozen=True, slots=True)
class Setting:
    """What the words need of the design: the strengths' zero (``anchor``, in words), the
    pairing (``--pairs``), the prompts and the family-wise alpha."""

    anchor: str
    pairing: str
    prompts: int
    alpha: float


def _money(value: float | None) -> str:
    """Dollars as ``reportfmt.dollars`` writes them (``$0.093``, ``$0.40``)."""
    return "cost unknown" if value is None else dollars(value)


def _times(ratio: float) -> str:
    words = {2: "twice", 3: "three times", 4: "four times", 5: "five times", 10: "ten times"}
    rounded = round(ratio)
    if rounded in words and abs(ratio - rounded) < 0.05 * ratio:
        return f"{words[rounded]} as much"
    return f"{ratio:.1f} times as much"


def prob(d: float | None) -> float | None:
    if d is None or math.isnan(d):
        return None
    if math.isinf(d):
        return 1.0 if d > 0 else 0.0
    return 1.0 / (1.0 + math.exp(-d))


def _listed(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(names) <= 2:
        return " and ".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _pair_result(record: PairRecord, winner: str, alpha: float) -> str:
    """``won 12 to 8, 15 ties, adjusted p = 0.50`` from ``winner``'s side; a p next to
    ``alpha`` with the digits that keep it on its side (``p = 0.0498 < 0.05``)."""
    wins, losses = (
        (record.wins, record.losses) if winner == record.first else (record.losses, record.wins)
    )
    return (
        f"won {wins} to {losses}, {count(record.ties, 'tie')}, adjusted "
        f"{format_p_against(record.p_holm, alpha)}"
    )


def interval_coverage(ranking: Ranking) -> str:
    """How often the strengths' 95% intervals held the truth in the seeded simulations of
    docs/statistics.md (percentile bootstrap over prompts, one interval at a time: about 0.90
    at 10 prompts, 0.93 at 30, 0.94 to 0.95 at 100), in words for the ranking's prompts; for
    Firth's profile intervals, measured only on data with such a sweep
    (tests/benchmarks/sim_firth_coverage.py): 0.91 to 0.997 where sweeps were common, down to
    about half and lower where a sweep was a fluke."""
    if ranking.fit == FIT_FIRTH:
        return (
            "comparisons as independent units, one at a time; in simulation, on runs with "
            "such a sweep, they held the true strength from about 99% of the time (where "
            "sweeps were common) down to about half (where a sweep was a fluke): read them as "
            "rough"
        )
    prompts = ranking.prompts
    held = (
        "about 90%"
        if prompts <= 15
        else "about 90% to 93%"
        if prompts <= 24
        else "about 93%"
        if prompts <= 45
        else "about 93% to 95%"
        if prompts <= 80
        else "about 94% to 95%"
    )
    return (
        f"one at a time, not simultaneous; at {count(prompts, 'prompt')} such intervals held "
        f"the true strength {held} of the time in simulation"
    )


def fit_words(ranking: Ranking) -> str | None:
    """``a penalised fit (Firth), since alpha won every comparison it was in`` when Firth's
    fit gave the strengths, else None."""
    if ranking.fit != FIT_FIRTH or ranking.fit_reason is None or ranking.problem is not None:
        return None
    reason = ranking.fit_reason.removesuffix(FIRTH_WORDS)
    return f"a penalised fit (Firth), since {reason}"


# --------------------------------------------------------------------------- from three


def _best_line(separated: Separations, setting: Setting) -> str:
    """Which candidates may be the best, from the separations."""
    k = len(separated.candidates)
    family = (
        f"exact pair tests, Holm across the {separated.hypotheses} ordered pairs, "
        f"{pct(1 - separated.alpha)} for every claim at once"
    )
    best = list(separated.best)
    if len(best) == k:
        line = (
            "No candidate is shown ahead of any other: the best could be any of the "
            f"{k} ({family})."
        )
        design = separable_after(
            k, pairing=setting.pairing, alpha=separated.alpha, prompts=setting.prompts
        )
        if design.separable is False:
            line += f" {design.note[0].upper()}{design.note[1:]}."
        return line
    ranks = {r.candidate: r for r in separated.ranks}
    if len(best) == 1 and len(ranks[best[0]].ahead_of) == k - 1:
        return f"{best[0]} is the best: the data put it ahead of every other candidate ({family})."
    rest = [name for name in separated.candidates if name not in best]
    who = (
        f"{best[0]} is the only candidate no other is shown ahead of"
        if len(best) == 1
        else f"The best is one of {_listed(best)}: no other candidate is shown ahead of them"
    )
    behind = "is shown behind" if len(rest) == 1 else "are each shown behind"
    return f"{who} ({family}); {_listed(rest)} {behind} some other."


def _claims_line(separated: Separations, pairs: PairTable) -> list[str]:
    """Every claim, grouped by the candidate ahead, with the pair's own counts."""
    if not separated.ahead:
        return []
    met = {frozenset((r.first, r.second)): r for r in pairs.pairs}
    direct = {(s.ahead, s.second if s.ahead == s.first else s.first) for s in separated.pairs}
    parts = []
    for winner in separated.candidates:
        losers = [loser for w, loser in separated.ahead if w == winner]
        if not losers:
            continue
        said = []
        for loser in losers:
            record = met.get(frozenset((winner, loser)))
            if (winner, loser) in direct and record is not None:
                said.append(f"{loser} ({_pair_result(record, winner, pairs.alpha)})")
            else:
                said.append(f"{loser} (through others)")
        parts.append(f"{winner} ahead of {_listed(said)}")
    pairs_met = len(separated.pairs)
    apart = {frozenset(claim) for claim in separated.ahead}
    rest = sum(1 for s in separated.pairs if frozenset((s.first, s.second)) not in apart)
    tail = "" if not rest else f" The other {count(rest, 'pair')} that met are not told apart."
    if rest == 1:
        tail = " The other pair that met is not told apart."
    return [
        f"Told apart (of {count(pairs_met, 'pair')} that met): " + "; ".join(parts) + "." + tail
    ]


def _ranks_line(separated: Separations, order: Sequence[str]) -> list[str]:
    """The ranks the data allow, all at once, once anything is told apart."""
    if not separated.ahead:
        return []
    ranks = {r.candidate: r for r in separated.ranks}
    shown = [
        f"{name} {ranks[name].rank_best}"
        if ranks[name].rank_best == ranks[name].rank_worst
        else f"{name} {ranks[name].rank_best}-{ranks[name].rank_worst}"
        for name in order
    ]
    return [
        f"Ranks the data allow ({pct(1 - separated.alpha)} for all at once): "
        + ", ".join(shown)
        + "."
    ]


def _reference_lines(reference: PairTable) -> list[str]:
    ref = reference.family.removeprefix("against ")
    parts = []
    for r in reference.pairs:
        rate = (
            f"{pct(r.win_rate.estimate)} (Wilson 95% {pct(r.win_rate.lo)} to {pct(r.win_rate.hi)})"
            if r.n
            else "undefined (only ties)"
        )
        flag = (
            "" if not r.significant else ", shown ahead" if r.wins > r.losses else ", shown behind"
        )
        p = format_p_against(r.p_holm, reference.alpha)
        parts.append(f"{r.first} {rate}, adjusted {p}{flag}")
    return [
        f"Against the reference {ref}, each candidate's share of the untied comparisons: "
        + "; ".join(parts)
        + "."
    ]


def _strength_lines(ranking: Ranking | None) -> list[str]:
    """Why there are no strengths, or which fit gave them when it is not maximum likelihood."""
    if ranking is None:
        return []
    if ranking.problem is not None:
        return [f"No strengths: {ranking.problem}."]
    words = fit_words(ranking)
    if words is None:
        return []
    return [
        f"The strengths are {words}: no finite maximum-likelihood estimate exists, and the "
        "penalty keeps every strength finite; their intervals are profile penalised-likelihood "
        "intervals."
    ]


def ranking_headline(
    ranking: Ranking | None,
    separated: Separations | None,
    pairs: PairTable,
    reference: PairTable | None,
    spend: Mapping[str, Mapping[str, Any]],
    setting: Setting,
) -> list[str]:
    """The result in words a person acts on, from the separations only: the best set, the
    claims, the ranks; which fit gave the strengths; the reference's table; what each costs;
    and what the data allow of a cheaper candidate they cannot tell from the highest
    estimate."""
    ranked = ranking is not None and ranking.problem is None
    order = (
        [s.candidate for s in ranking.strengths] if ranking is not None and ranked else list(spend)
    )
    lines: list[str] = []
    if separated is not None:
        lines.append(_best_line(separated, setting))
        lines += _claims_line(separated, pairs)
        lines += _ranks_line(separated, order)
        if separated.problem is not None:
            lines.append(f"Note: {separated.problem}.")
    lines += _strength_lines(ranking)
    if reference is not None:
        lines += _reference_lines(reference)
    costs = {n: s["cost_per_answer"] for n, s in spend.items() if s["cost_per_answer"]}
    if costs:
        shown = [f"{n} {_money(1000 * costs[n]) if n in costs else 'unknown'}" for n in order]
        lines.append("Cost per 1,000 answers: " + ", ".join(shown) + ".")
        if ranking is not None and ranked and separated is not None:
            lines += _cheaper_line(order, separated, pairs, costs, setting.alpha)
    return lines


def _cheaper_line(
    order: Sequence[str],
    separated: Separations,
    pairs: PairTable,
    costs: Mapping[str, float],
    alpha: float,
) -> list[str]:
    """A cheaper candidate that met the highest estimate of the best set and that the
    separations do not tell from it: what the data allow (the pair's Wilson interval of the
    untied share, one pair at a time), never "adequate" or "not worse", which only a margin
    fixed before the data can show; and the pre-registered decision that would settle it,
    with the comparisons it needs (`blindtest.stats.sizing.decision_sample_size`: at a true
    share of 1/2, this pair's tie rate, power 0.8). Candidates that never met it get no such
    sentence: not being told apart for want of data says nothing."""
    leader = next((name for name in order if name in separated.best), None)
    if leader is None or leader not in costs:
        return []
    apart = {frozenset(claim) for claim in separated.ahead}
    met = {frozenset((r.first, r.second)): r for r in pairs.pairs}
    close = []
    for name in order:
        record = met.get(frozenset((leader, name)))
        if name == leader or name not in costs or costs[name] >= costs[leader]:
            continue
        if record is None or not record.n or frozenset((leader, name)) in apart:
            continue
        close.append((name, record))
    if not close:
        return []
    name, record = min(close, key=lambda c: (costs[c[0]], order.index(c[0])))
    rate = record.win_rate
    lo, hi = (rate.lo, rate.hi) if record.first == leader else (1 - rate.hi, 1 - rate.lo)
    ties = record.ties / (record.wins + record.losses + record.ties)
    return [
        f"The data cannot tell the cheaper {name} from {leader}, the highest estimate "
        f"({leader} {_pair_result(record, leader, alpha)}): they allow {leader} to be "
        f"preferred in up to {pct(hi)} of the untied comparisons between them (and in as few "
        f"as {pct(lo)}; Wilson 95%), and {leader} costs "
        f"{_times(costs[leader] / costs[name])} per answer. Not being told apart does not "
        f"make them equal: {_settle(leader, name, ties)}"
    ]


def _settle(leader: str, name: str, ties: float) -> str:
    """The pre-registered design that would settle whether ``name`` is within
    `SUGGESTED_MARGIN` of ``leader``, and the comparisons it needs at a true share of 1/2
    and this pair's tie rate (at the design's default alpha, as the command shown has none)."""
    size = decision_sample_size(
        "noninferior", SUGGESTED_MARGIN, true=0.5, ties=min(ties, 0.95), power=SUGGESTED_POWER
    )
    design = (
        f"a new design (bt-design with `--pairs reference:{leader} --decide "
        f"noninferior:{SUGGESTED_MARGIN:g} --sensitivity {SUGGESTED_SENSITIVITY}`)"
    )
    if size.smallest_n is None:
        return f"to decide it, pre-register the margin in {design}."
    return (
        f"to decide it, pre-register the margin in {design}: at a true share of 1/2 and this "
        f"pair's tie rate ({pct(ties)}), {size.smallest_n:,} comparisons of {name} against "
        f"{leader} show it with power {SUGGESTED_POWER:g}."
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
    result: PreferenceResult, first: str, second: str, judged: int
) -> tuple[str, str]:
    """(verdict, the headline's closing words): the test's conclusion; ``judged`` counts the
    comparisons with an outcome (for the tie rate). The hidden controls decide nothing here:
    they describe the judge (`blindtest.analysis.controls`)."""
    verdict = {"better": f"{first} preferred", "worse": f"{second} preferred"}.get(
        result.verdict, "inconclusive"
    )
    tie_rate = result.ties / judged if judged else 0.0
    if result.verdict == "inconclusive":
        words = (
            _level_words(result, first, second, tie_rate)
            if not result.margin_ok
            else "Inconclusive: the Wilson interval and the exact test do not both exclude 1/2."
        )
        if tie_rate >= 1 / 4:
            # Said only when the ties are many: wording follows the numbers.
            words += f" The tie rate ({pct(tie_rate)}) is itself a finding."
    else:
        words = f"Verdict: {verdict} (interval and exact test agree, margin {result.margin})."
    return verdict, words


def _level_words(result: PreferenceResult, first: str, second: str, tie_rate: float) -> str:
    """Spec 001's "no conclusion from a margin smaller than two tasks", in words a user can act
    on: what the counts say (nothing about which is preferred) and what settles it (more
    prompts, sized by bt-plan at this run's tie rate; bt-plan takes a tie rate below 1)."""
    ties = f"{round(min(tie_rate, 0.95), 2):g}"
    return (
        f"Inconclusive: {first} and {second} won within one comparison of each other "
        f"({result.wins} to {result.losses} of the untied), which says nothing about which is "
        "preferred. To tell them apart, judge more prompts in a new design (bt-plan "
        f"--protocol preference --ties {ties} --target-power 0.8 says how many)."
    )
