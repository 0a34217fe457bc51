"""What the judges' own records add up to beside the result: "both bad" (an abstention) per
candidate and per judge, each judge's skips and changes, and the result on first picks.

"Both bad" (``PicksFile.abstentions``) is its own outcome, never a tie: a tie in Davidson's
model says two candidates are equally strong, which "both bad" does not. It is left out of the
win rates, the tests and the ranking (the analysis never reads it as a pick) and counted here,
one to each candidate of the comparison it was said on. The unit is one judge's word on one
comparison.

A judge may change an earlier word (a ``"correction"`` record, ``PicksFile.changes``): the
result reads the last word; when any word was changed the same analysis is run on the first
words (``PicksFile.first_words``) and its verdict and key figures stand beside the result, so
a reader sees whether the changes moved it. Pure; opens no file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from blindtest import reportfmt
from blindtest.model.candidates import candidates_of, comparison_sides
from blindtest.model.picks import JudgeCounts
from blindtest.model.scoring import arrangement_entry
from blindtest.reportfmt import pct
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord

if TYPE_CHECKING:
    from blindtest.model.picks import Pick, PicksFile

__all__ = [
    "ABSTENTION_UNIT",
    "FIRST_PICKS_FIGURES",
    "abstentions_section",
    "first_picks_section",
    "judge_counts",
    "words_changed",
]

ABSTENTION_UNIT = "one judge's word on one comparison"
#: The figures of a report that the result on first picks repeats, where the report has them.
FIRST_PICKS_FIGURES = ("n", "correct", "wins", "losses", "ties", "p_value", "pc", "pd")


# --------------------------------------------------------------------------- both bad


def abstentions_section(
    design: DesignRecord, picks: Sequence[Pick], abstentions: Sequence[Pick]
) -> JsonObject:
    """``report["abstentions"]``: the "both bad" words, in all (``n``), on how many comparisons,
    the comparisons no other word was given on (``left_out``: no outcome), per judge, and per
    candidate (``by_candidate``: each word counts once for each candidate of its comparison,
    beside the words given on the comparisons the candidate was in, and their share)."""
    words: Counter[str] = Counter()
    said: Counter[str] = Counter()
    for pick in (*picks, *abstentions):
        for name in comparison_sides(arrangement_entry(design, pick.trial)):
            words[name] += 1
            said[name] += pick.both_bad
    listed = []
    for pick in sorted(abstentions, key=lambda p: (p.trial, p.judge)):
        left, right = comparison_sides(arrangement_entry(design, pick.trial))
        listed.append(
            {
                "trial": pick.trial,
                "prompt_id": str(arrangement_entry(design, pick.trial)["prompt_id"]),
                "judge": pick.judge,
                "left": left,
                "right": right,
                "reason": pick.reason,
            }
        )
    section: JsonObject = {
        "unit": ABSTENTION_UNIT,
        "n": len(abstentions),
        "comparisons": len({p.trial for p in abstentions}),
        "left_out": sorted({p.trial for p in abstentions} - {p.trial for p in picks}),
        "by_judge": dict(sorted(Counter(p.judge for p in abstentions).items())),
        "by_candidate": [
            {
                "candidate": name,
                "both_bad": said[name],
                "judged": words[name],
                "share": said[name] / words[name] if words[name] else None,
            }
            for name in candidates_of(design)
        ],
        "listed": listed,
    }
    section["statement"] = abstentions_statement(section)
    return section


def abstentions_statement(section: Mapping[str, Any]) -> str | None:
    """The "both bad" words in one sentence (None when there are none)."""
    n = int(section["n"])
    if not n:
        return None
    on = reportfmt.count(int(section["comparisons"]), "comparison")
    times = {1: "once", 2: "twice"}.get(n, f"{n} times")
    said = f'"Both bad" was said {times}, on {on}'
    left_out = len(section["left_out"])
    if left_out:
        said += f" ({reportfmt.count(left_out, 'comparison')} with no other word, so no outcome)"
    per = ", ".join(
        f"{row['candidate']} {row['both_bad']} of {row['judged']}"
        + (f" ({pct(row['share'])})" if row["share"] is not None and row["both_bad"] else "")
        for row in section["by_candidate"]
    )
    return (
        f"{said}: an abstention, left out of the win rates, the tests and the ranking (a tie "
        f"would say the two are equally strong). Per candidate, of the words on its "
        f"comparisons: {per}."
    )


# --------------------------------------------------------------------------- each judge


def judge_counts(files: Sequence[PicksFile]) -> list[JsonObject]:
    """``report["judge_counts"]``: per judge, in order of first appearance, what its records
    add up to over every file (``PicksFile.counts``): trials judged, "both bad" among them,
    changes, skips, trials skipped at least once and never answered, and the skip rate (trials
    skipped at least once out of those met)."""
    merged: dict[str, JudgeCounts] = {}
    for file in files:
        for judge, own in file.counts().items():
            before = merged.get(judge)
            if before is None:
                merged[judge] = own
                continue
            merged[judge] = JudgeCounts(
                judge=judge,
                judged=before.judged + own.judged,
                abstained=before.abstained + own.abstained,
                changed=before.changed + own.changed,
                skipped=before.skipped + own.skipped,
                skipped_trials=before.skipped_trials + own.skipped_trials,
                unresolved=before.unresolved + own.unresolved,
            )
    return [
        {
            "judge": c.judge,
            "judged": c.judged,
            "both_bad": c.abstained,
            "changed": c.changed,
            "skipped": c.skipped,
            "skipped_trials": c.skipped_trials,
            "unresolved": c.unresolved,
            "skip_rate": c.skip_rate(),
        }
        for c in merged.values()
    ]


def words_changed(files: Sequence[PicksFile]) -> int:
    """How many words (one judge, one trial) stand otherwise than first given: a change and
    its change back leave a word as it was."""
    changed = 0
    for file in files:
        first = {p.slot: p.pick for p in (*file.first_picks, *file.first_abstentions)}
        changed += sum(1 for p in file.answered if first.get(p.slot, p.pick) != p.pick)
    return changed


# --------------------------------------------------------------------------- first picks


def first_picks_section(
    first: Mapping[str, Any], report: Mapping[str, Any], files: Sequence[PicksFile]
) -> JsonObject:
    """``report["first_picks"]``: the same analysis on the first words (``first``, the report
    :meth:`PicksFile.first_words` makes), beside ``report``: the changes per judge, how many
    words stand otherwise, the verdict, statement and headline on first picks, whether the
    verdict is the same, and its key figures (``FIRST_PICKS_FIGURES``; with a ranking, each
    candidate's rank and strength)."""
    changes: Counter[str] = Counter()
    for file in files:
        changes.update(file.changes)
    section = first.get("candidates") or {}
    ranking = [
        {"candidate": r["candidate"], "rank": r.get("rank"), "strength": r.get("strength")}
        for r in section.get("ranking") or []
        if "strength" in r
    ]
    return {
        "changes": sum(changes.values()),
        "by_judge": dict(sorted(changes.items())),
        "words_changed": words_changed(files),
        "verdict": first["verdict"],
        "same_verdict": first["verdict"] == report["verdict"],
        "statement": first["statement"],
        "headline": list(section.get("headline") or []),
        "figures": {key: first[key] for key in FIRST_PICKS_FIGURES if first.get(key) is not None},
        "ranking": ranking,
    }
