"""Tells: what the audit's bots, which read nothing but length or look for duplicates,
explain beside the judge's score, and the formatting census. Pure; opens no file."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from blindtest.analysis.common import EXPLAINS_SHARE
from blindtest.model.candidates import candidates_of
from blindtest.model.protocols import protocol_of
from blindtest.reportfmt import count, format_p, format_p_against
from blindtest.rundir.artifacts import JsonObject
from blindtest.rundir.types import DesignRecord
from blindtest.stats import binomial_test

_BOT_CHANNEL = {"length": "length", "duplicate": "near-duplicates"}
_BOT_NAME = {
    "length": "length bot, which reads nothing but word counts",
    "duplicate": "duplicate spotter, which only looks for two near-identical answers",
}


def _excess(correct: int, n: int, chance: float) -> float:
    return correct / n - chance if n else 0.0


def _matching(bot: Mapping[str, Any], fields: Mapping[str, Any]) -> int:
    bot_picks = {p["trial"]: p["pick"] for p in bot["picks"]}
    return sum(1 for r in fields["per_trial"] if bot_picks.get(r["trial"]) == r["pick"])


def _length_preference(
    design: DesignRecord, bot: Mapping[str, Any], fields: Mapping[str, Any]
) -> list[str]:
    """Preference: did the judges simply prefer the longer response? (Spec 001: reviewers
    systematically prefer longer output.)"""
    longer = {p["trial"]: p["pick"] for p in bot["picks"] if p["pick"] != "tie"}
    votes = [r for r in fields["per_trial"] if r["pick"] != "tie" and r["trial"] in longer]
    if not votes:
        return []
    followed = sum(1 for r in votes if r["pick"] == longer[r["trial"]])
    p_value = binomial_test(followed, len(votes), 0.5).p_value
    share = followed / len(votes)
    if p_value <= design["alpha"] and share >= EXPLAINS_SHARE:
        return [
            f"{_who(fields)} preferred the longer response in {followed} of {len(votes)} untied "
            f"comparisons ({format_p(p_value)}). Reviewers systematically prefer longer output, "
            "so this preference may be a preference for length."
        ]
    if bot["p_value"] is not None and bot["p_value"] <= design["alpha"]:
        # Three cases, said differently: more often than chance yet too seldom for length to
        # explain the preference; above half but within chance; half or less.
        if p_value <= design["alpha"] and share > 0.5:
            how = (
                f"in {followed} of {len(votes)} untied comparisons ({format_p(p_value)}): more "
                f"often than chance, but under {EXPLAINS_SHARE:.0%}, so length explains only "
                "part of the preference"
            )
        elif share > 0.5:
            how = (
                f"in {followed} of {len(votes)} untied comparisons ({format_p(p_value)}), not "
                "clearly more than half"
            )
        else:
            how = f"in only {followed} of {len(votes)} untied comparisons"
        if "per_candidate" in bot:  # several candidates: every one length separates
            separates = _separated(design, bot["per_candidate"])
        else:
            separates = (
                f"Length separates the models (the longer answer was A's in {bot['correct']} "
                f"of {bot['n']} trials)"
            )
        return [f"{separates}, and {_who(fields).lower()} preferred the longer response {how}."]
    return []


def _listing(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return " and ".join(items) if len(items) < 3 else ", ".join(items[:-1]) + " and " + items[-1]


def _separated(design: DesignRecord, tells: Mapping[str, Mapping[str, Any]]) -> str:
    """Every candidate length separates from those it met (Holm-adjusted p at or below
    alpha), the longer ones and the shorter ones, each with its count of prompts, in the
    design's order."""
    alpha = design["alpha"]
    found = {
        name: tells[name]
        for name in candidates_of(design)
        if tells[name]["p_holm"] is not None and tells[name]["p_holm"] <= alpha
    }
    ways = []
    for way, longer in (("longer", True), ("shorter", False)):
        named = [
            f"{name} on {t[way]} of {count(t['longer'] + t['shorter'], 'prompt')} "
            f"({format_p_against(t['p_holm'], alpha)})"
            for name, t in found.items()
            if (t["longer"] > t["shorter"]) == longer
        ]
        if named:
            ways.append(f"the {way} answer came from {_listing(named)}")
    who = "it" if len(found) == 1 else "they"
    return (
        f"Length separates {count(len(found), 'candidate')} from those {who} met "
        f"(prompt by prompt, each candidate's answer against its opponents'; Holm-adjusted "
        f"across the candidates): {'; '.join(ways)}"
    )


def _who(fields: Mapping[str, Any]) -> str:
    return "The judge" if len(fields.get("judges") or []) == 1 else "The judges"


def _whose(fields: Mapping[str, Any]) -> str:
    return "judge's" if len(fields.get("judges") or []) == 1 else "judges'"


def _bot_sentence(
    design: DesignRecord, kind: str, bot: Mapping[str, Any], fields: Mapping[str, Any]
) -> str | None:
    """Triangle and pair: does a bot that cannot read come close to the judge? Every clause
    follows the numbers: a judge whose picks match the bot's is never said to have missed the
    bot's channel."""
    chance = protocol_of(design).chance
    if fields.get("correct") is None or not fields.get("n"):
        return None
    judge_excess = _excess(fields["correct"], fields["n"], chance)
    bot_excess = _excess(bot["correct"], bot["n"], chance)
    if protocol_of(design).two_sided:
        # Inverted nicknames are discrimination too: the distance from chance is what counts.
        judge_excess, bot_excess = abs(judge_excess), abs(bot_excess)
    name = _BOT_NAME[kind]
    channel = _BOT_CHANNEL[kind]
    if fields.get("verdict") == "distinguished":
        if judge_excess > 0 and bot_excess >= EXPLAINS_SHARE * judge_excess:
            return (
                f"The discrimination is largely explained by {channel}: the {name}, "
                f"scored {bot['correct']}/{bot['n']} against the {_whose(fields)} "
                f"{fields['correct']}/{fields['n']}. You know what you measured."
            )
        return None
    if bot["p_value"] is None or bot["p_value"] > design["alpha"]:
        return None
    lead = (
        f"The {name}, scored {bot['correct']}/{bot['n']} ({format_p(bot['p_value'])}): "
        f"{channel} alone separates the models on these prompts"
    )
    single = len(fields.get("judges") or []) == 1
    if single and fields.get("per_trial"):
        same = _matching(bot, fields)
        judged = len(fields["per_trial"])
        if same >= EXPLAINS_SHARE * judged:
            return (
                f"{lead}, and the judge's picks were the bot's on {same} of {judged} judged "
                f"trials: these judgements followed {channel}."
            )
        return (
            f"{lead}; the judge's picks were the bot's on only {same} of {judged} judged "
            f"trials, so these judgements did not follow {channel}."
        )
    return (
        f"{lead}; the judgements, at {fields['correct']}/{fields['n']}, did not reach "
        "significance, so they did not pick it up as reliably as the bot."
    )


#: Census figures the result screen shows, per response (spec 000's "Tells").
CENSUS_FIGURES = ("em_dashes", "bold", "bullets")


def census_summary(
    audit: Mapping[str, Any], sides: tuple[str, ...] | list[str] = ("A", "B")
) -> JsonObject | None:
    """Mean words and the formatting counts that matter, per side (``sides``: or per
    candidate, in the design's order), from ``audit.json``; None when it lacks one."""
    census = audit.get("census") or {}
    if not all(side in census for side in sides):
        return None
    return {
        side: {
            "model": census[side].get("model"),
            "responses": census[side].get("responses"),
            "mean_words": census[side].get("mean_words"),
            **{f: (census[side].get("per_response") or {}).get(f) for f in CENSUS_FIGURES},
        }
        for side in sides
    }


def audit_summary(
    design: DesignRecord, audit: Mapping[str, Any] | None, fields: Mapping[str, Any]
) -> JsonObject | None:
    """The bots' scores beside the judge's, and what they explain (spec 000, "Tells")."""
    if audit is None:
        return None
    summary: JsonObject = {
        "bots": {},
        "sentences": [],
        "checks": audit.get("checks"),
        "census": census_summary(audit),
    }
    names = audit.get("candidates")
    if names:  # several candidates: the census and the length tell per candidate
        summary["census_by_candidate"] = census_summary(audit, names)
        summary["length_by_candidate"] = audit["bots"]["length"].get("per_candidate")
    single = len(fields.get("judges") or []) == 1
    for kind, bot in audit["bots"].items():
        if not bot.get("applicable", True) or not bot["n"]:
            continue
        entry = {"correct": bot["correct"], "n": bot["n"], "p_value": bot["p_value"]}
        prefers = protocol_of(design).prefers
        if not prefers and single:
            entry["same_picks_as_judge"] = _matching(bot, fields)
        summary["bots"][kind] = entry
        if prefers:
            summary["sentences"] += (
                _length_preference(design, bot, fields) if kind == "length" else []
            )
            continue
        sentence = _bot_sentence(design, kind, bot, fields)
        if sentence:
            summary["sentences"].append(sentence)
    return summary
