"""bt-audit: the mechanical tell bots replayed on what the judge saw, the formatting census per
model, and the prompts' mechanical checks with McNemar's exact paired test (specs 000, 001)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from blindtest.analysis.api import format_p
from blindtest.designing.build import Normalization
from blindtest.model.slots import Slot
from blindtest.rundir import artifacts

from report_runs import (
    add_responses,
    cli,
    load,
    make_design,
    make_run,
    numbered_prompts,
    tokens,
    triangle_p,
    triangle_picks,
    two_sided_half,
    write_design_run,
    write_picks,
)
from screen_text import paragraphs

RTOL = 1e-9


def audit(run: Path, *args: Any) -> dict[str, Any]:
    result = cli("audit", run, *args)
    assert result.exit_code == 0, result.stderr
    return artifacts.read_json(run / artifacts.AUDIT, "audit")


def uneven(slot: Slot, entry: Mapping[str, Any]) -> str:
    """Word counts from 8 to 12 in a fixed pattern, so that some trials tie and the bots
    must draw from their seeded generator."""
    return tokens(f"t{slot.trial}s{slot.slot}", 8 + (7 * slot.trial + 3 * slot.slot) % 5)


# --------------------------------------------------------------------------- the bots


@pytest.mark.parametrize(
    ("protocol", "kind"),
    [
        ("triangle", "length"),
        ("triangle", "duplicate"),
        ("pair", "length"),
        ("preference", "length"),
    ],
)
def test_audit_bots_pick_exactly_what_bt_judge_bots_pick(
    tmp_path: Path, protocol: str, kind: str
) -> None:
    run = make_run(tmp_path, protocol, 20, text=uneven)
    document = audit(run)
    out = tmp_path / "bot.jsonl"
    judged = cli("judge", run, "--judge", f"bot:{kind}", "--out", out, "--quiet")
    assert judged.exit_code == 0, judged.stderr
    picks = artifacts.read_jsonl(out, "picks").records
    replayed = document["bots"][kind]["picks"]
    assert [(p["trial"], p["pick"]) for p in replayed] == [(p["trial"], p["pick"]) for p in picks]


def test_length_bot_score_and_p_value_are_exact(tmp_path: Path) -> None:
    run = make_run(tmp_path)  # the odd response is always the long (or the short) one
    document = audit(run)
    bot = document["bots"]["length"]
    odd = {e["trial"]: e["odd_position"] for e in load(run)["arrangement"]}
    assert [p["pick"] for p in bot["picks"]] == [odd[t] for t in range(1, 21)]
    assert (bot["correct"], bot["n"]) == (20, 20)
    assert bot["p_value"] == pytest.approx(float(triangle_p(20, 20)), rel=RTOL)
    assert bot["p_value"] == pytest.approx(3.0**-20, rel=RTOL)


def test_duplicate_spotter_fires_on_near_identical_twins_and_says_how_often(
    tmp_path: Path,
) -> None:
    twins = {2, 5, 11, 17}

    def text(slot: Slot, entry: Mapping[str, Any]) -> str:
        if slot.trial in twins and slot.slot != entry["odd_position"]:
            return tokens(f"twin{slot.trial}", 15)
        return tokens(f"t{slot.trial}s{slot.slot}", 15)

    run = write_design_run(tmp_path, make_design("triangle", 20))
    add_responses(run, text)
    bot = audit(run)["bots"]["duplicate"]
    assert bot["fired"] == len(twins)
    fired = {p["trial"] for p in bot["picks"] if p["fired"]}
    assert fired == twins
    odd = {e["trial"]: e["odd_position"] for e in load(run)["arrangement"]}
    assert all(p["pick"] == odd[p["trial"]] for p in bot["picks"] if p["fired"])
    assert bot["p_value"] == pytest.approx(float(triangle_p(bot["correct"], 20)), rel=RTOL)


def test_pair_and_preference_length_bots_score_against_one_half(tmp_path: Path) -> None:
    pair = audit(make_run(tmp_path, "pair", 20, name="pair"))
    length = pair["bots"]["length"]
    assert (length["correct"], length["n"]) == (20, 20)  # "longer" is always A
    assert length["p_value"] == pytest.approx(float(two_sided_half(20, 20)), rel=RTOL)
    assert pair["bots"]["duplicate"]["applicable"] is False
    preference = audit(make_run(tmp_path, "preference", 20, name="preference"))
    length = preference["bots"]["length"]
    assert (length["correct"], length["n"]) == (20, 20)  # it always prefers A, the longer
    assert length["p_value"] == pytest.approx(2.0**-19, rel=RTOL)


# --------------------------------------------------------------------------- the census

# Hand-counted: 11 words, 1 heading, 2 bullets, 1 bold, 1 em dash, no code block.
A_TEXT = "# Plan {label}\n\n- first step\n- second step\n\n**Bold** claim — with a dash."
# 10 words (the code counts as words), 1 code block; its em dash is code, not style.
B_TEXT = "Short answer {label}, see below.\n\n```\ncode here — not a dash\n```"
# 6 words, a refusal.
REFUSAL = "I can't help with that request."


def census_run(root: Path) -> tuple[Path, int, int]:
    """Two triangle trials (one doubles A, one doubles B): 3 responses per side. B's first
    response is a refusal and its last one was cut by the length limit."""
    run = write_design_run(root, make_design("triangle", 2))
    b_slots: list[tuple[int, int]] = []

    def text(slot: Slot, entry: Mapping[str, Any]) -> str:
        label = f"{slot.trial}.{slot.slot}"
        if slot.side == "A":
            return A_TEXT.format(label=label)
        b_slots.append((slot.trial, slot.slot))
        return REFUSAL if len(b_slots) == 1 else B_TEXT.format(label=label)

    add_responses(run, text, finish_reason=lambda slot: "stop")
    rows = artifacts.read_jsonl(run / artifacts.RESPONSES, "responses").records
    for row in rows:
        if (row["trial"], row["slot"]) == b_slots[-1]:
            row |= {"finish_reason": "length", "kind": "length", "truncated": True}
    artifacts.write_jsonl(run / artifacts.RESPONSES, rows, "responses", force=True)
    return run, 3, 3


def test_census_counts_per_model_match_a_hand_count(tmp_path: Path) -> None:
    run, n_a, n_b = census_run(tmp_path)
    census = audit(run)["census"]
    a, b = census["A"], census["B"]
    assert a["model"] == "model-a"
    assert (a["responses"], b["responses"]) == (n_a, n_b)
    assert a["words"] == 11 * n_a
    assert a["mean_words"] == 11
    assert a["median_words"] == 11
    assert a["totals"] == {
        "bullets": 2 * n_a,
        "numbered": 0,
        "headings": n_a,
        "bold": n_a,
        "em_dashes": n_a,
        "en_dashes": 0,
        "code_blocks": 0,
        "tables": 0,
        "emoji": 0,
    }
    assert (a["refusals"], a["cut_by_length"]) == (0, 0)
    assert b["words"] == 6 + 10 * (n_b - 1)
    assert b["median_words"] == 10
    assert b["totals"]["code_blocks"] == n_b - 1
    assert b["totals"]["em_dashes"] == 0
    assert b["totals"]["bullets"] == b["totals"]["headings"] == b["totals"]["bold"] == 0
    assert (b["refusals"], b["cut_by_length"]) == (1, 1)
    assert b["share"]["code_blocks"] == pytest.approx((n_b - 1) / n_b)


def test_audit_without_responses_counts_what_the_judge_saw(tmp_path: Path) -> None:
    run, n_a, _ = census_run(tmp_path)
    (run / artifacts.RESPONSES).unlink()
    result = cli("audit", run)
    assert result.exit_code == 0, result.stderr
    assert "no responses.jsonl: census without refusals or cut responses" in result.stderr
    document = artifacts.read_json(run / artifacts.AUDIT, "audit")
    assert document["checks"] is None
    assert document["responses_seen"] is None
    assert document["census"]["A"]["totals"]["bullets"] == 2 * n_a
    assert document["census"]["B"]["refusals"] == 1  # the refusal phrase is in the text
    assert document["census"]["B"]["cut_by_length"] == 0  # no finish reasons without responses
    assert document["bots"]["length"]["n"] == 2


def test_audit_rerun_recomputes_the_same_bytes_and_another_designs_audit_needs_force(
    tmp_path: Path,
) -> None:
    run = make_run(tmp_path)
    audit(run)
    before = (run / artifacts.AUDIT).read_bytes()
    assert audit(run) == artifacts.read_json(run / artifacts.AUDIT, "audit")
    assert (run / artifacts.AUDIT).read_bytes() == before
    foreign = artifacts.read_json(run / artifacts.AUDIT, "audit") | {"design_sha256": "0" * 64}
    artifacts.write_json(run / artifacts.AUDIT, foreign, "audit", force=True)
    stale = (run / artifacts.AUDIT).read_bytes()
    result = cli("audit", run)
    assert result.exit_code == 2
    assert result.stderr == (
        f"blindtest: error: {run / artifacts.AUDIT} already exists; use --force to overwrite it\n"
    )
    assert (run / artifacts.AUDIT).read_bytes() == stale
    assert cli("audit", run, "--force").exit_code == 0
    assert (run / artifacts.AUDIT).read_bytes() == before


def test_audit_needs_the_blinded_trials(tmp_path: Path) -> None:
    run = make_run(tmp_path, text=None)
    result = cli("audit", run)
    assert result.exit_code == 2
    assert result.stderr.startswith("blindtest: error: ")
    assert "trials.jsonl" in result.stderr
    assert not (run / artifacts.AUDIT).exists()


# --------------------------------------------------------------------------- mechanical checks

FLIPPED = {2, 7, 10}  # trials where B gets it right and A wrong
CHECKS = {1: {"regex": r"\b42$"}, 2: {"equals": "answer 42"}, 3: {"command": "grep -q 42"}}


def checked_run(root: Path) -> Path:
    """12 triangle trials; prompts cycle through regex, equals and command checks. A answers
    42 and B 41, except on FLIPPED trials."""
    prompts = numbered_prompts(12, check=lambda i: CHECKS[(i - 1) % 3 + 1])
    run = write_design_run(root, make_design("triangle", 12, prompts=prompts))

    def text(slot: Slot, entry: Mapping[str, Any]) -> str:
        right = (slot.side == "A") != (slot.trial in FLIPPED)
        return "answer 42" if right else "answer 41"

    add_responses(run, text)
    return run


def expected_checks(run: Path, commands: bool) -> dict[str, Any]:
    """Hand-derived: each response passes iff it says 42; one (A, B) pair per trial."""
    design = load(run)
    kind = {p["id"]: next(iter(p["check"])) for p in design["prompts"]}
    counted = [e for e in design["arrangement"] if commands or kind[e["prompt_id"]] != "command"]
    passed = {"A": 0, "B": 0}
    total = {"A": 0, "B": 0}
    for entry in counted:
        for side in ("A", "B"):
            draws = 2 if entry["doubled"] == side else 1
            total[side] += draws
            passed[side] += draws * ((side == "A") != (entry["trial"] in FLIPPED))
    b_only = sum(1 for e in counted if e["trial"] in FLIPPED)
    return {
        "pass": {s: {"passed": passed[s], "total": total[s]} for s in ("A", "B")},
        "a_only": len(counted) - b_only,
        "b_only": b_only,
    }


def mcnemar_exact(a_only: int, b_only: int) -> Fraction:
    """Exact McNemar: the two-sided binomial test at 1/2 on the discordant pairs."""
    return two_sided_half(b_only, a_only + b_only)


@pytest.mark.parametrize("commands", [False, True])
def test_mechanical_checks_report_pass_rates_and_mcnemars_exact_test(
    tmp_path: Path, commands: bool
) -> None:
    run = checked_run(tmp_path)
    document = audit(run, *(["--allow-commands"] if commands else []))
    checks = document["checks"]
    expected = expected_checks(run, commands)
    assert checks["prompts"] == 12
    assert checks["pass"] == expected["pass"]
    paired = checks["paired"]
    assert (paired["a_only"], paired["b_only"]) == (expected["a_only"], expected["b_only"])
    assert paired["pairs"] == expected["a_only"] + expected["b_only"]
    assert paired["p_value"] == pytest.approx(
        float(mcnemar_exact(paired["a_only"], paired["b_only"])), rel=RTOL
    )
    # Command checks run only with --allow-commands; without, each of the 3 responses of the
    # 4 trials whose prompt carries a command check is "not run".
    assert checks["not_run"] == (0 if commands else 3 * 4)


def test_command_checks_run_in_a_fresh_directory_with_the_response_on_stdin(
    tmp_path: Path,
) -> None:
    prompts = numbered_prompts(
        3, check=lambda i: {"command": 'test ! -e design.json && test -z "$(ls)" && grep -qx 42'}
    )
    run = write_design_run(tmp_path, make_design("triangle", 3, prompts=prompts))
    add_responses(run, lambda slot, entry: "42" if slot.side == "A" else "41")
    checks = audit(run, "--allow-commands")["checks"]
    design = load(run)
    a_total = sum(2 if e["doubled"] == "A" else 1 for e in design["arrangement"])
    assert checks["pass"]["A"] == {"passed": a_total, "total": a_total}
    assert checks["pass"]["B"]["passed"] == 0


def test_the_report_shows_mechanical_checks_before_the_blind_judgement(tmp_path: Path) -> None:
    run = checked_run(tmp_path)
    audit(run, "--allow-commands")
    write_picks(run / artifacts.PICKS, triangle_picks(load(run), 6))
    result = cli("analyze", run)
    assert result.exit_code == 0, result.stderr
    lines = paragraphs(result.stdout)
    checks = next(i for i, s in enumerate(lines) if s.startswith("Mechanical checks first"))
    score = next(i for i, s in enumerate(lines) if "6 of 12 correct" in s)
    assert checks < score
    assert (
        "The blind judgement below speaks only to what the checks could not decide."
        in (lines[checks])
    )
    expected = expected_checks(run, commands=True)
    a, b = expected["pass"]["A"], expected["pass"]["B"]
    p = float(mcnemar_exact(expected["a_only"], expected["b_only"]))
    assert lines[checks].startswith(
        f"Mechanical checks first (12 prompts): A passed {a['passed']}/{a['total']}, "
        f"B {b['passed']}/{b['total']}; paired McNemar {format_p(p)}."
    )


def test_checks_read_the_response_as_the_endpoint_returned_it(tmp_path: Path) -> None:
    prompts = numbered_prompts(3, check=lambda i: {"regex": r"^\*\*42\*\*$"})
    run = write_design_run(
        tmp_path,
        make_design(
            "triangle",
            3,
            prompts=prompts,
            normalization=Normalization(strip_formatting=True),
        ),
    )
    add_responses(run, lambda slot, entry: "42" if slot.side == "A" else "41")
    rows = artifacts.read_jsonl(run / artifacts.RESPONSES, "responses").records
    for row in rows:  # bt-generate keeps the original when normalization changed the text
        row["raw_text"] = f"**{row['text']}**"
    artifacts.write_jsonl(run / artifacts.RESPONSES, rows, "responses", force=True)
    checks = audit(run)["checks"]
    assert checks["pass"]["A"]["passed"] == checks["pass"]["A"]["total"] > 0
    assert checks["pass"]["B"]["passed"] == 0
