"""The judges' own records on the result screen and the report page: the result on first picks
beside the result when any word was changed, and each judge's words, "both bad", changes and
skips with the skip rate, and "both bad" per candidate (`blindtest.analysis.raters` computes
them into ``report["first_picks"]``, ``report["judge_counts"]`` and
``report["abstentions"]``).

Formatting only: every number and sentence comes from the report. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from blindtest.present.lines import aligned
from blindtest.reportfmt import count, fixed, pct

__all__ = [
    "BOTH_BAD_SHOWN",
    "JUDGE_HEADER",
    "abstention_rows",
    "first_picks_lines",
    "judge_rows",
    "judges_lines",
    "page_raters",
    "trial_rows",
]

JUDGE_HEADER = (
    "judge",
    "judged",
    "both bad",
    "changed",
    "skips (trials)",
    "skip rate",
    "never answered",
)
ABSTENTION_HEADER = ("candidate", '"both bad"', "of the words on its comparisons", "share")
#: The pick a per-trial list shows for a "both bad" word (an abstention: no side preferred).
BOTH_BAD_SHOWN = "both bad"


def _changes(found: Mapping[str, Any]) -> str:
    """``6 changes by alice``, ``3 changes: 2 by ana, 1 by bo``."""
    by: Mapping[str, int] = found.get("by_judge") or {}
    total = count(int(found["changes"]), "change")
    if len(by) == 1:
        return f"{total} by {next(iter(by))}"
    return f"{total}: " + ", ".join(f"{n} by {judge}" for judge, n in by.items())


def _ranked(ranking: Sequence[Mapping[str, Any]]) -> str:
    """``alpha +1.20, beta +0.40, ...`` in the first picks' order (a strength not estimable
    said as such)."""
    parts = []
    for row in ranking:
        strength = (row.get("strength") or {}).get("estimate")
        shown = "not estimable" if strength is None else fixed(strength, sign=True)
        parts.append(f"{row['candidate']} {shown}")
    return ", ".join(parts)


def first_picks_lines(report: Mapping[str, Any]) -> list[str]:
    """Beside the result, when any word was changed: the same analysis on the first words (its
    verdict in its own words, with a ranking each candidate's strength), and whether the
    changes moved the verdict. Of its headline, the first sentence and those the result does
    not say word for word (a cost line, or a pair the changes did not touch, is said once).
    Nothing when no word was changed."""
    found = report.get("first_picks")
    if not found:
        return []
    moved = int(found.get("words_changed") or 0)
    stand = f"; {count(moved, 'word')} now {'stands' if moved == 1 else 'stand'} otherwise"
    head = f"On first picks (before {_changes(found)}{stand}): "
    said = list(found.get("headline") or []) or [str(found["statement"])]
    same = set((report.get("candidates") or {}).get("headline") or [])
    said = [said[0], *(line for line in said[1:] if line not in same)]
    verdict = (
        "The changes left the verdict as it was."
        if found["same_verdict"]
        else f"The changes moved the verdict: {found['verdict']} on first picks, "
        f"{report['verdict']} on the last."
    )
    lines = [head + said[0], *said[1:]]
    if found.get("ranking"):
        lines.append(f"  Strengths on first picks: {_ranked(found['ranking'])}.")
    lines.append(f"  {verdict}")
    return lines


def _shown(found: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a judge's records say anything beyond its count of words."""
    keys = ("both_bad", "changed", "skipped")
    return any(row.get(key) for row in found for key in keys)


def judge_rows(report: Mapping[str, Any]) -> list[list[str]]:
    """One row per judge (``JUDGE_HEADER``), or none when no judge said "both bad", changed a
    word or skipped: then there is nothing to read in it."""
    found: Sequence[Mapping[str, Any]] = report.get("judge_counts") or []
    if not _shown(found):
        return []
    return [
        [
            str(row["judge"]),
            str(row["judged"]),
            str(row["both_bad"]),
            str(row["changed"]),
            f"{row['skipped']} ({row['skipped_trials']})",
            "-" if row["skip_rate"] is None else pct(row["skip_rate"]),
            str(row["unresolved"]),
        ]
        for row in found
    ]


def abstention_rows(report: Mapping[str, Any]) -> list[list[str]]:
    """ "Both bad" per candidate (``ABSTENTION_HEADER``), none when it was never said."""
    found = report.get("abstentions") or {}
    if not found.get("n"):
        return []
    return [
        [
            str(row["candidate"]),
            str(row["both_bad"]),
            str(row["judged"]),
            "-" if row["share"] is None else pct(row["share"]),
        ]
        for row in found["by_candidate"]
    ]


def judges_lines(report: Mapping[str, Any]) -> list[str]:
    """The screen's block: each judge's records (words, "both bad", changes, skips, skip rate)
    and the "both bad" sentence; nothing when there is nothing to say."""
    rows = judge_rows(report)
    statement = (report.get("abstentions") or {}).get("statement")
    if not rows and not statement:
        return []
    lines: list[str] = []
    if rows:
        lines += [
            "Each judge's records (a skip puts a comparison off; a change replaces a word, and "
            "the result reads the last):",
            *aligned([list(JUDGE_HEADER), *rows], right=range(1, len(JUDGE_HEADER))),
        ]
    if statement:
        lines.append(str(statement))
    return lines


def page_raters(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the report page draws of the judges' records (None: nothing to draw)."""
    first = first_picks_lines(report)
    rows = judge_rows(report)
    candidates = abstention_rows(report)
    statement = (report.get("abstentions") or {}).get("statement")
    if not (first or rows or candidates):
        return None
    return {
        "first": [line.strip() for line in first],
        "judge_header": list(JUDGE_HEADER),
        "judge_rows": rows,
        "abstention_header": list(ABSTENTION_HEADER),
        "abstention_rows": candidates,
        "abstentions": statement,
    }


def trial_rows(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The per-trial list's rows, in trial and judge order: each pick (``per_trial``) and each
    "both bad" word (``abstentions.listed``), marked by its pick ``BOTH_BAD_SHOWN`` and no side
    preferred, so that a reader can open the answers called bad."""
    rows: list[Mapping[str, Any]] = list(report.get("per_trial") or [])
    listed = (report.get("abstentions") or {}).get("listed") or []
    if not listed:
        return rows
    said = [
        {
            "trial": word["trial"],
            # A report before analysis version 7 did not list the prompt.
            "prompt_id": word.get("prompt_id", ""),
            "judge": word["judge"],
            "left": word["left"],
            "right": word["right"],
            "pick": BOTH_BAD_SHOWN,
            "preferred": None,
            "reason": word.get("reason"),
        }
        for word in listed
    ]
    return sorted([*rows, *said], key=lambda r: (int(r["trial"]), str(r["judge"])))
