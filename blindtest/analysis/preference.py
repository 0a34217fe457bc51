"""The analysis of preference: one for every design, whatever its number of candidates k >= 2
(a two-sided design is k = 2, its candidates the sides A and B).

The unit is one comparison: one judge's verdict on two answers to one prompt; with several
judges, the majority on it (split or tied: a tie). An LLM judge's excluded comparisons are
judged (they finish a fixed design) but count neither as wins nor as ties. Each step below is
one function, computed the same way for every k:

- :func:`comparison_outcomes`: the outcome of each comparison (the winner's name, or a tie);
- :func:`separations`: which candidates the data put ahead of which, the only source of every
  claim that two candidates differ (exact one-sided sign tests per ordered pair, Holm over the
  ordered pairs at the design's alpha, closed under transitivity: `blindtest.stats.separation`),
  and the rank intervals and the best set that follow;
- :func:`pair_tests`: per pair that met, wins, losses and ties, the Wilson interval of the
  untied win rate and the exact two-sided binomial p (`blindtest.stats.pairwise`), a
  description; its adjusted p and its mark are the separations' (:func:`separated_table`);
  :func:`reference_tests` each candidate against a reference, marked the same way;
- :func:`rank`: from k = 3, Davidson-Bradley-Terry strengths (Firth's penalised fit when the
  maximum-likelihood estimate does not exist) with a bootstrap over prompts from
  ``IndexStream(seed, "ranking")`` (`blindtest.stats.ranking`), which bt-verify recomputes;
  two candidates need no ranking, their pair is the result;
- :func:`position_check` and :func:`agreement`, and :func:`gate_problems` from them: the gates
  (spec 002) that make a run say nothing (`blindtest.analysis.gates`);
- :func:`tag_tests`: the per-pair tests within each prompt tag, Holm across every tag's pairs;
- the headline (:mod:`blindtest.analysis.preference_words`): for k = 2 the pair's verdict under
  spec 002's rule (the Wilson interval and the exact test agree and the margin is at least
  two tasks: `blindtest.stats.preference`), which governs there (whatever it claims the
  separations claim too: `tests/analysis/test_pair_verdict_and_separations.py`); from k = 3
  the separations in words: the best set, the claims, the ranks.

Everything here is revealed only after judging; a fixed design that was not finished keeps only
``VOID_KEYS`` (`blindtest.analysis.report`). Pure; opens no file.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from blindtest.analysis.common import (
    AnalysisOptions,
    by_judge,
    excluded_reason,
    finished_design,
    interval,
    position_margin,
    prompts_by_trial,
    void_statement,
)
from blindtest.analysis.gates import (
    GATE_NOTHING_COUNTED,
    agreement,
    gate_problems,
    per_judge_needed,
    position_check,
)
from blindtest.analysis.preference_words import (
    Setting,
    excluded_words,
    interval_coverage,
    pair_conclusion,
    pair_statement,
    prob,
    ranking_headline,
)
from blindtest.model import pairing
from blindtest.model.candidates import candidates_of, comparison_sides, shown_name
from blindtest.model.rng import IndexStream
from blindtest.model.scoring import arrangement_entry, preferred_side
from blindtest.reportfmt import TESTS
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord
from blindtest.stats import preference_test
from blindtest.stats.multiple import holm
from blindtest.stats.pairwise import PairTable, pair_table, reference_table, tally
from blindtest.stats.ranking import DAVIDSON, FIT_FIRTH, Ranking, outcomes, rank_candidates
from blindtest.stats.separation import ADJUSTMENT, Separations, separate

if TYPE_CHECKING:
    from blindtest.model.picks import Pick

__all__ = [
    "ANALYSIS_VERSION",
    "RANKED_FROM",
    "RANKING_STREAM",
    "Outcomes",
    "PreferenceAnalysis",
    "agreement",
    "analyze_preference",
    "comparison_outcomes",
    "gate_problems",
    "pair_tests",
    "per_judge_needed",
    "position_check",
    "rank",
    "reference_tests",
    "separated_table",
    "separations",
    "tag_tests",
]

#: The version of what this analysis writes into a preference report (report@2's
#: ``analysis_version``): raised whenever a figure, a verdict or a sentence it writes changes,
#: so that bt-verify can tell a report written by an older analysis from a tampered one.
#: 2: the judges' own records (abstentions, judge_counts, first picks); 3: style control says
#: what the data can support; 4: separations, the best set and rank sets, Firth's fit when the
#: likelihood has no maximum; 5: the position gate over comparisons with a margin (the hidden
#: controls' picks among them), agreement's near-chance gate and its pairs of candidates,
#: controls that describe and never withdraw a verdict, an LLM judge whose every verdict fell
#: below --min-confidence failing the run; 6: from three candidates, style control gives no
#: strength to a candidate whose equal style lies outside its comparisons (status
#: "extrapolated"), and the mean anchor, the order and the differences are the others'; 7:
#: with a people's sample, ``people_trials_planned`` (what people were asked, which the void
#: line and the header count against); ``candidates.prompts_planned`` (the prompts of every
#: planned comparison, a "both bad"-only one too, which the header counts); the prompt of each
#: "both bad" word (``abstentions.listed[].prompt_id``), listed among the trials; a margin under
#: two said in plain words with what to do; an LLM judge's own position gate without the planted
#: comparisons; ``by_tag[*].pairs[*].won_more`` (who won more there, a count), which was called
#: ``ahead`` as the claims of ``candidates.pairs`` are; a decision on the people's
#: estimate reads one-sided p-values for every interval (Hall's skewness correction where it is
#: stricter, the exact interval inverted), Holm across challengers instead of Bonferroni, the
#: interval at the unadjusted 1 - 2 alpha; the people's estimate says what each of the LLM
#: judge's flaws cost its interval in width (``people_estimate.flaw_costs``), lists identity
#: leakage among the flaws, and says "bound" on every line of a bounded estimate. 8: a
#: people's-sample decision given after the fact is made on the people's estimate, and one not
#: settled says how many people's judgements would settle it (``settle``, ``decision_sample``).
ANALYSIS_VERSION = 8
#: The smallest number of candidates that gets a ranking: two candidates' pair is the result.
RANKED_FROM = 3
#: The label of the ranking bootstrap's index stream (with the design seed).
RANKING_STREAM = "ranking"
RANKING_TEST = (
    "which candidates differ: exact one-sided sign tests per ordered pair, Holm over the "
    "ordered pairs, closed under transitivity (Mogstad, Romano, Shaikh and Wilhelm 2024); "
    "strengths: Davidson-Bradley-Terry (Firth's penalised fit when the maximum-likelihood "
    "estimate does not exist), bootstrap over prompts; per pair the Wilson interval and the "
    "exact two-sided binomial p, a description"
)
#: How a pair table's adjusted p and mark are made once the separations mark them.
SEPARATED_ADJUSTMENT = (
    f"{ADJUSTMENT}: exact one-sided sign tests (blindtest.stats.separation); p_holm is the "
    "adjusted p of the likelier direction, significant that it reaches alpha"
)
#: How two candidates' one pair is marked: by their verdict, which governs for two.
VERDICT_ADJUSTMENT = (
    f"{ADJUSTMENT}: exact one-sided sign tests (blindtest.stats.separation); p_holm is the "
    "adjusted p of the likelier direction; significant is the pair's verdict (the Wilson "
    "interval and the exact two-sided test agree, the margin at least two), which claims "
    "nothing these tests do not"
)
UNIT = (
    "a comparison: one judge's verdict on two answers to one prompt (with several judges, "
    "their majority on it)"
)
RANKING_UNIT = (
    "; the ranking's intervals take the prompt as the unit (a bootstrap over prompts, every "
    "comparison of a prompt together)"
)
FIRTH_UNIT = (
    "; the ranking's intervals (profile penalised likelihood, Firth's fit) take each "
    "comparison as an independent unit: no bootstrap over prompts can stand on a fit that "
    "exists only through the penalty"
)
SCALE = (
    "log-odds: a difference d between two strengths means the first is preferred to the "
    "second in 1/(1+e^-d) of the comparisons between them that are not ties"
)


# --------------------------------------------------------------------------- the outcomes


@dataclass(frozen=True, slots=True)
class Outcomes:
    """What the picks say, comparison by comparison. ``winner``: trial -> the preferred
    candidate's name, or ``"tie"`` (the majority of its judges; ties and splits are ties);
    ``rows``: (prompt_id, left, right, winner or None) of each comparison with an outcome, in
    trial order; ``counted``: the picks that count, ``excluded`` those an LLM judge left out;
    ``judges``: the counted picks by judge; ``abstained``: the "both bad" words (abstentions,
    ``PicksFile.abstentions``), which judge a comparison but count in no outcome."""

    names: tuple[str, ...]
    winner: Mapping[int, str]
    rows: tuple[tuple[str, str, str, str | None], ...]
    counted: tuple[Pick, ...]
    excluded: tuple[Pick, ...]
    judges: Mapping[str, Sequence[Pick]]
    abstained: tuple[Pick, ...] = ()

    @property
    def judged(self) -> set[int]:
        """Every comparison judged: with an outcome, left out by an LLM judge, or said to be
        "both bad" (an abstention finishes a fixed design as any word does)."""
        return set(self.winner) | {p.trial for p in (*self.excluded, *self.abstained)}


def comparison_outcomes(
    design: DesignRecord, picks: Sequence[Pick], abstentions: Sequence[Pick] = ()
) -> Outcomes:
    """The outcome of each comparison: the candidate most of its judges preferred, ``"tie"``
    when they tied or split (module doc). ``abstentions`` ("both bad") are kept beside, in
    no outcome: a comparison every judge abstained on has none."""
    excluded = tuple(p for p in picks if excluded_reason(p) is not None)
    counted = tuple(p for p in picks if excluded_reason(p) is None)
    judges = by_judge(counted)
    votes: dict[int, Counter[str]] = defaultdict(Counter)
    for own in judges.values():
        for pick in own:
            votes[pick.trial][preferred_side(design, pick.trial, pick.pick) or "tie"] += 1
    winner = {}
    for trial, count in votes.items():
        ranked = count.most_common()
        tied = len(ranked) > 1 and ranked[0][1] == ranked[1][1]
        winner[trial] = "tie" if tied else ranked[0][0]
    rows = []
    for trial, won in sorted(winner.items()):
        entry = arrangement_entry(design, trial)
        left, right = comparison_sides(entry)
        rows.append((str(entry["prompt_id"]), left, right, None if won == "tie" else won))
    return Outcomes(
        candidates_of(design), winner, tuple(rows), counted, excluded, judges, tuple(abstentions)
    )


# --------------------------------------------------------------------------- per pair


def separations(found: Outcomes, alpha: float) -> Separations | None:
    """Which candidates the data put ahead of which at family-wise ``alpha`` (the design's):
    exact one-sided sign tests per ordered pair, Holm over the ordered pairs, the claims
    closed under transitivity, the rank intervals and the best set
    (`blindtest.stats.separation.separate`). None without a comparison counted."""
    if not found.rows:
        return None
    return separate(outcomes(list(found.names), list(found.rows)), alpha=alpha)


def separated_table(table: PairTable, separated: Separations | None) -> PairTable:
    """``table`` with each pair's adjusted p and mark taken from the separations: ``p_holm``
    the Holm-adjusted p (over the ordered pairs) of the likelier direction, ``significant``
    that the pair's own test puts one ahead. The Wilson interval and the two-sided p stay,
    one pair at a time, as a description. Unchanged without separations."""
    if separated is None:
        return table
    by_pair = {frozenset((s.first, s.second)): s for s in separated.pairs}
    records = []
    for r in table.pairs:
        found = by_pair.get(frozenset((r.first, r.second)))
        p_adjusted = 1.0 if found is None else found.p_adjusted
        ahead = None if found is None else found.ahead
        records.append(replace(r, p_holm=p_adjusted, significant=ahead is not None))
    return replace(table, pairs=tuple(records), adjustment=SEPARATED_ADJUSTMENT)


def pair_tests(found: Outcomes, alpha: float, separated: Separations | None = None) -> PairTable:
    """Per pair that met (module doc), marked by the separations (computed here unless
    given); for two candidates the one pair, the first candidate's wins counted as wins."""
    table = pair_table(tally(found.names, [row[1:] for row in found.rows]), alpha=alpha)
    return separated_table(table, separated or separations(found, alpha))


def reference_of(design: DesignRecord) -> str | None:
    """The reference of a ``--pairs reference:NAME`` design, else None."""
    recorded = cast(Mapping[str, Any], design).get("pairing")
    if not recorded:
        return None
    mode = pairing.parse_mode(str(recorded["mode"]))
    return mode.reference if mode.kind == "reference" else None


def reference_tests(
    found: Outcomes, reference: str | None, alpha: float, separated: Separations | None = None
) -> PairTable | None:
    """Each candidate against the reference (ties counted, left out of the win rate), marked
    by the separations (whose family, in a reference design, is these pairs' two
    directions), or None without a reference (or with two candidates, whose one pair says it
    all)."""
    if reference is None or len(found.names) < RANKED_FROM:
        return None
    tallies = tally(found.names, [row[1:] for row in found.rows])
    if not any(reference in (t.first, t.second) for t in tallies):
        return None
    table = reference_table(tallies, reference, alpha=alpha)
    return separated_table(table, separated or separations(found, alpha))


def rank(design: DesignRecord, found: Outcomes, reference: str | None) -> Ranking | None:
    """The ranking, from k = 3 (None for two candidates, or without a comparison counted):
    its separations at the design's alpha, and Firth's penalised fit where the
    maximum-likelihood estimate does not exist (a candidate that won every comparison keeps
    its place, with ``fit`` and ``fit_reason`` saying so)."""
    if len(found.names) < RANKED_FROM or not found.rows:
        return None
    return rank_candidates(
        outcomes(list(found.names), list(found.rows)),
        rng=IndexStream(str(design["seed"]), RANKING_STREAM),
        anchor=reference,
        alpha=design["alpha"],
        firth=True,
    )


def _tally_of(found: Outcomes) -> dict[str, Counter[str]]:
    """Each candidate's wins, losses and ties over the comparisons it was in."""
    per: dict[str, Counter[str]] = {name: Counter() for name in found.names}
    for _, left, right, won in found.rows:
        for side in (left, right):
            per[side]["tie" if won is None else "win" if won == side else "loss"] += 1
    return per


def _win_matrix(names: Sequence[str], pairs: PairTable) -> list[list[JsonObject | None]]:
    """Row candidate against column candidate: wins, losses, ties and the untied win rate
    (null on the diagonal and for pairs that never met)."""
    index = {n: i for i, n in enumerate(names)}
    matrix: list[list[JsonObject | None]] = [[None] * len(names) for _ in names]
    for r in pairs.pairs:
        i, j = index[r.first], index[r.second]
        n = r.wins + r.losses
        matrix[i][j] = {
            "wins": r.wins,
            "losses": r.losses,
            "ties": r.ties,
            "win_rate": r.wins / n if n else None,
        }
        matrix[j][i] = {
            "wins": r.losses,
            "losses": r.wins,
            "ties": r.ties,
            "win_rate": r.losses / n if n else None,
        }
    return matrix


# --------------------------------------------------------------------------- by tag


def tag_tests(design: DesignRecord, found: Outcomes) -> JsonObject:
    """Per prompt tag (a prompt with several tags counts in each; seed 001: break the result
    down by task type before concluding): the tag's comparisons, each candidate's wins, losses
    and ties with its untied win rate (a description: against whichever candidates it met
    there), and the per-pair tests of :func:`pair_tests` within the tag, their p-values
    Holm-adjusted across every tag's pairs that have an untied comparison (for two
    candidates: across the tags)."""
    tags = {p["id"]: p.get("tags", []) for p in design["prompts"]}
    rows: dict[str, list[tuple[str, str, str | None]]] = defaultdict(list)
    for prompt_id, left, right, won in found.rows:
        for tag in tags[prompt_id]:
            rows[tag].append((left, right, won))
    alpha = design["alpha"]
    tables = {tag: pair_table(tally(found.names, rows[tag]), alpha=alpha) for tag in sorted(rows)}
    cells = [(tag, n) for tag, t in tables.items() for n, r in enumerate(t.pairs) if r.n]
    adjusted = dict(zip(cells, holm([tables[t].pairs[n].p_value for t, n in cells]), strict=True))
    found_tags: JsonObject = {}
    for tag, table in tables.items():
        per: dict[str, Counter[str]] = {}
        for left, right, won in rows[tag]:
            for side in (left, right):
                count = per.setdefault(side, Counter())
                count["tie" if won is None else "win" if won == side else "loss"] += 1
        candidates = []
        for name in found.names:
            c = per.get(name)
            if not c:
                continue
            test = preference_test(c["win"], c["loss"], c["tie"], alpha=alpha)
            candidates.append(
                {
                    "candidate": name,
                    "wins": c["win"],
                    "losses": c["loss"],
                    "ties": c["tie"],
                    "n": test.n,
                    "win_rate": interval(test.win_rate),
                }
            )
        pairs = []
        for n, r in enumerate(table.pairs):
            p_holm = adjusted.get((tag, n), 1.0)
            pairs.append(
                {
                    **r.to_dict(),
                    "p_holm": p_holm,
                    "significant": r.n > 0 and p_holm <= alpha,
                    # Who won more here: a count, not a claim (the whole's claims are
                    # candidates.pairs' "ahead"); called "ahead" before analysis version 7.
                    "won_more": r.first
                    if r.wins > r.losses
                    else r.second
                    if r.losses > r.wins
                    else None,
                }
            )
        found_tags[tag] = {"comparisons": len(rows[tag]), "candidates": candidates, "pairs": pairs}
    return found_tags


# --------------------------------------------------------------------------- excluded


def excluded_section(found: Outcomes) -> JsonObject | None:
    """``report["excluded"]``: the comparisons an LLM judge left out (never ties), by reason,
    and the comparisons no judge's verdict was left for; None when none was left out."""
    if not found.excluded:
        return None
    reasons = Counter(str(excluded_reason(p)) for p in found.excluded)
    listed = [
        {"trial": p.trial, "judge": p.judge, "reason": excluded_reason(p)}
        for p in sorted(found.excluded, key=lambda p: (p.trial, p.judge))
    ]
    return {
        "n": len(found.excluded),
        "by_reason": dict(sorted(reasons.items())),
        "trials_left_out": sorted({p.trial for p in found.excluded} - set(found.winner)),
        "comparisons": listed,
    }


# --------------------------------------------------------------------------- the analysis


@dataclass(frozen=True, slots=True)
class PreferenceAnalysis:
    """The preference report's own fields (``fields``, splatted into the report), its exit
    code, and the figures the rest of the report is written from."""

    fields: dict[str, Any]
    exit_code: int
    outcomes: Outcomes
    ranking: Ranking | None


def _per_trial(design: DesignRecord, picks: Sequence[Pick]) -> list[JsonObject]:
    prompt_of = prompts_by_trial(design)
    rows = []
    for p in sorted(picks, key=lambda p: (p.trial, p.judge)):
        left, right = comparison_sides(arrangement_entry(design, p.trial))
        reason = excluded_reason(p)
        rows.append(
            {
                "trial": p.trial,
                "prompt_id": prompt_of[p.trial],
                "judge": p.judge,
                "left": left,
                "right": right,
                "pick": p.pick,
                "preferred": None
                if reason is not None
                else preferred_side(design, p.trial, p.pick),
                **({"excluded": reason} if reason is not None else {}),
                "reason": p.reason,
            }
        )
    return rows


def _candidate_records(
    found: Outcomes,
    ranking: Ranking | None,
    spend: Mapping[str, JsonObject],
    ranks: Mapping[str, tuple[int, int]],
) -> list[JsonObject]:
    """One record per candidate: with a ranking, strongest first with its strength; else in
    the design's order; each with the ranks the data allow (``ranks``: from the separations,
    or for two candidates from their verdict), its wins, losses and ties, answers, tokens and
    cost."""
    if ranking is None:
        per = _tally_of(found)
        return [
            {
                "candidate": name,
                "rank": None,
                "rank_best": ranks[name][0] if name in ranks else None,
                "rank_worst": ranks[name][1] if name in ranks else None,
                "comparisons": sum(per[name].values()),
                "wins": per[name]["win"],
                "losses": per[name]["loss"],
                "ties": per[name]["tie"],
                **spend[name],
            }
            for name in found.names
        ]
    records = []
    for position, s in enumerate(ranking.strengths, start=1):
        strength = interval(s.strength)
        records.append(
            {
                "candidate": s.candidate,
                "rank": position if ranking.problem is None else None,
                "strength": strength,
                "p_preferred_vs_average": prob(strength["estimate"])
                if ranking.anchor == "mean"
                else None,
                "rank_best": s.rank_best,
                "rank_worst": s.rank_worst,
                "comparisons": s.comparisons,
                "wins": s.wins,
                "losses": s.losses,
                "ties": s.ties,
                **spend[s.candidate],
            }
        )
    return records


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _separations_record(separated: Separations | None) -> JsonObject | None:
    """``report["candidates"]["separations"]``: the family and its method, every claim (winner,
    loser; direct or by transitivity) and each pair's exact tests (the ranks and the best set
    are beside it, in the records and ``best``)."""
    if separated is None:
        return None
    whole = separated.to_dict()
    keys = ("alpha", "correction", "hypotheses", "unit", "test", "adjustment", "method")
    return {
        **{key: whole[key] for key in keys},
        "problem": separated.problem,
        "ahead": [list(claim) for claim in separated.ahead],
        "pairs": whole["pairs"],
    }


def _ranking_fields(ranking: Ranking | None, k: int, found: Outcomes) -> JsonObject:
    """The ranking's figures in ``report["candidates"]`` (with two candidates, none: their
    pair is the result)."""
    if ranking is None:
        problem = None
        if k >= RANKED_FROM:
            problem = "no comparison was counted, so there is no ranking"
        return {
            "tie_model": None,
            "fit": None,
            "fit_reason": None,
            "problem": problem,
            "interval_problem": None,
            "tie_parameter": None,
            "log_likelihood": None,
            "iterations": 0,
            "differences": [],
            "groups": [],
            "prompts": len({row[0] for row in found.rows}),
            "comparisons": len(found.rows),
            "bootstrap": None,
        }
    whole = ranking.to_dict()
    firth = ranking.fit == FIT_FIRTH
    return {
        "tie_model": "davidson" if ranking.model == DAVIDSON else "bradley-terry",
        "fit": None if ranking.problem is not None else ranking.fit,
        "fit_reason": ranking.fit_reason,
        "problem": ranking.problem,
        "interval_problem": ranking.interval_problem,
        "tie_parameter": whole["tie_parameter"],
        "log_likelihood": whole["log_likelihood"],
        "iterations": ranking.iterations,
        "differences": whole["differences"],
        "groups": [list(g) for g in ranking.groups],
        "prompts": ranking.prompts,
        "comparisons": ranking.comparisons,
        "bootstrap": {
            "unit": "comparison" if firth else "prompt",
            "resamples": ranking.resamples,
            "failed_resamples": ranking.failed_resamples,
            "firth_resamples": ranking.firth_resamples,
            "confidence_level": ranking.confidence_level,
            "critical_value": _finite(ranking.critical_value),
            "stream": f"IndexStream(seed, {RANKING_STREAM!r})",
            "interval_method": ranking.interval_method,
            "difference_method": ranking.difference_method,
            "coverage": interval_coverage(ranking),
        },
    }


def _ranking_unit(ranking: Ranking | None) -> str:
    """What the ranking's intervals count as one unit (nothing without strengths)."""
    if ranking is None or ranking.problem is not None:
        return ""
    return FIRTH_UNIT if ranking.fit == FIT_FIRTH else RANKING_UNIT


def _ranking_verdict(separated: Separations | None) -> str:
    return "ranked" if separated is not None and separated.ahead else "inconclusive"


def _pair_ranks(names: Sequence[str], verdict: str | None) -> dict[str, tuple[int, int]]:
    """Two candidates' ranks as their verdict allows (the rule that governs for two): the one
    preferred first, else either may be."""
    first, second = names
    if verdict == "better":
        return {first: (1, 1), second: (2, 2)}
    if verdict == "worse":
        return {first: (2, 2), second: (1, 1)}
    return {first: (1, 2), second: (1, 2)}


def _verdict_table(table: PairTable, best: Sequence[str]) -> PairTable:
    """Two candidates' one pair marked by their verdict, which governs for two (it claims
    nothing the separations do not: at alpha 0.05 the two agree; above it the Wilson 95%
    interval can hold back a claim the exact test alone would make)."""
    records = tuple(replace(r, significant=len(best) == 1) for r in table.pairs)
    return replace(table, pairs=records, adjustment=VERDICT_ADJUSTMENT)


def _marked_pairs(table: PairTable, claims: Collection[tuple[str, str]]) -> JsonObject:
    """``table.to_dict()`` with each pair's ``ahead``: the candidate ``claims`` put ahead
    (winner, loser: the separations' claims, direct or by transitivity; for two candidates
    their verdict's), or None."""
    whole = table.to_dict()
    for row in whole["pairs"]:
        pair = (row["first"], row["second"])
        row["ahead"] = pair[0] if pair in claims else pair[1] if pair[::-1] in claims else None
    return whole


def analyze_preference(
    design: DesignRecord,
    picks: Sequence[Pick],
    options: AnalysisOptions,
    *,
    spend: Mapping[str, JsonObject],
    judge_gates: Sequence[str] = (),
    positions: Sequence[Pick] | None = None,
    control_trials: Collection[int] = (),
    reveal: bool = True,
    abstentions: Sequence[Pick] = (),
) -> PreferenceAnalysis:
    """The preference report's fields for any k (module doc). ``spend``: each candidate's
    answers, tokens and cost (``responses.spend``); ``judge_gates``: the gates the judges' own
    diagnostics failed (an LLM judge's position gate, a judge whose every verdict fell below
    --min-confidence); ``positions``: every pick record that named a position for the
    position gate (every pass of an LLM judge's swap, and the hidden controls' records, their
    trials in ``control_trials``; default ``picks``). The hidden controls decide no verdict:
    they describe the judge (`blindtest.analysis.controls`). ``reveal`` False leaves the
    bootstrap out (an unfinished design's report keeps none of it). Exit code 1 when the
    design is unfinished or a gate fails. ``abstentions``: the "both bad" words, which finish
    the design and count in nothing else."""
    names = candidates_of(design)
    k = len(names)
    alpha = design["alpha"]
    found = comparison_outcomes(design, picks, abstentions)
    separated = separations(found, alpha)
    pairs = pair_tests(found, alpha, separated)
    reference = reference_of(design)
    against = reference_tests(found, reference, alpha, separated)
    finished = finished_design(design, len(found.judged))
    ranking = rank(design, found, reference) if finished or reveal else None
    bias = position_check(
        picks if positions is None else positions,
        alpha,
        position_margin(design, options),
        controls=control_trials,
        judges=len(by_judge(picks)),
    )
    panel = agreement(design, found.judges, options)
    problems = gate_problems(bias, panel, judge_gates=judge_gates)
    dropped = excluded_section(found)
    if dropped is not None and not found.winner:
        problems.append(
            f"{GATE_NOTHING_COUNTED}every comparison was left out of the test "
            f"({excluded_words(dropped)}); nothing was measured."
        )
    head = pairs.pairs[0] if k == 2 and pairs.pairs else None
    result = (
        preference_test(head.wins, head.losses, head.ties, alpha=alpha)
        if head is not None
        else preference_test(0, 0, 0, alpha=alpha)
        if k == 2
        else None
    )
    if result is not None:  # two candidates: their verdict governs the best and the ranks
        ranks = _pair_ranks(names, result.verdict)
        best = [name for name in names if ranks[name][0] == 1]
        pairs = _verdict_table(pairs, best)
        claims = (
            {(best[0], other) for other in names if other != best[0]} if len(best) == 1 else set()
        )
    elif separated is not None:
        ranks = {r.candidate: (r.rank_best, r.rank_worst) for r in separated.ranks}
        best, claims = list(separated.best), set(separated.ahead)
    else:
        ranks, best, claims = {}, list(names), set()
    anchor = "mean" if reference is None else reference
    spend_of = {name: spend.get(name) or _no_spend() for name in names}
    section: JsonObject = {
        "names": list(names),
        "shown": {name: shown_name(design, name) for name in names},
        "pairing": str((cast(Mapping[str, Any], design).get("pairing") or {}).get("mode", "all")),
        "unit": UNIT + _ranking_unit(ranking),
        "scale": "log-odds",
        "scale_meaning": SCALE,
        "anchor": anchor,
        "ranking": _candidate_records(found, ranking, spend_of, ranks),
        **_ranking_fields(ranking, k, found),
        "best": best,
        "separations": _separations_record(separated) if result is None else None,
        "pairs": _marked_pairs(pairs, claims),
        "win_matrix": _win_matrix(names, pairs),
        "reference": against.to_dict() if against is not None else None,
        "by_tag": tag_tests(design, found),
        # The prompts of every planned comparison, those without an outcome ("both bad" only,
        # or excluded) too: what the header counts beside trials_planned.
        "prompts_planned": len({str(e["prompt_id"]) for e in design["arrangement"]}),
        "headline": [],
    }
    fields: dict[str, Any] = {
        "judges": sorted(found.judges),
        "test": TESTS["preference"] if k == 2 else RANKING_TEST,
        "wins": result.wins if result is not None else None,
        "losses": result.losses if result is not None else None,
        "ties": result.ties if result is not None else None,
        "excluded": dropped,
        "p_value": result.p_value if result is not None else None,
        "pc": interval(result.win_rate) if result is not None else None,
        "preference": result.to_dict() if result is not None else None,
        "position_bias": bias.to_dict() if bias else None,
        "agreement": panel,
        "gates_failed": problems,
        "per_trial": _per_trial(design, picks),
        "candidates": section,
        "n": len(found.winner),
    }
    if not finished:
        fields |= {"verdict": "void", "statement": void_statement(design, len(found.judged))}
        return PreferenceAnalysis(fields, 1, found, ranking)
    if problems:
        statement = "Not a result: " + " ".join(problems)
        fields |= {"verdict": "unusable", "statement": statement}
        section["headline"] = [statement]
        return PreferenceAnalysis(fields, 1, found, ranking)
    if result is not None:
        first, second = (section["shown"][name] for name in names)
        statement = pair_statement(result, (names[0], names[1]), section["shown"], dropped)
        said, words = pair_conclusion(result, first, second, len(found.winner))
        statement += words
        section["headline"] = [statement]
        fields |= {"verdict": said, "statement": statement}
        return PreferenceAnalysis(fields, 0, found, ranking)
    section["headline"] = ranking_headline(
        ranking,
        separated,
        pairs,
        against,
        spend_of,
        Setting(
            anchor="the mean strength" if reference is None else f"the reference {reference}",
            pairing=section["pairing"],
            prompts=len(design["prompts"]),
            alpha=alpha,
        ),
    )
    fields |= {
        "verdict": _ranking_verdict(separated),
        "statement": " ".join(section["headline"]),
    }
    return PreferenceAnalysis(fields, 0, found, ranking)


def _no_spend() -> JsonObject:
    return {"answers": None, "tokens": None, "cost": None, "cost_per_answer": None}
