"""Extra questions after each pick: asked of each option (bt-design --ask-each, answered
{"left": bool, "right": bool}) or once per comparison (--ask, one boolean). The tests of the
statistics (exact McNemar between sides, Fisher's exact against the preferred side) against R
and exact enumeration, their size under the null by seeded simulation, the analysis mapping
left/right to sides only through the arrangement, degenerate tables said in words, several
judges, hidden controls, the picks contract, the design options, and bt-verify.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from blindtest.analysis.answers import answers_summary
from blindtest.model.picks import Pick
from blindtest.rundir import artifacts
from blindtest.stats import fisher_exact, mcnemar_exact

from report_runs import (
    balanced_outcomes,
    cli,
    load,
    make_design,
    make_run,
    numbered_prompts,
    preference_picks,
    read_report,
    wilson,
    write_picks,
)

DATA = Path(__file__).resolve().parents[1] / "data"
ERROR = "Does it contain a factual error?"
REVIEW = "Would either pass review unchanged?"


def _reference(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((DATA / name).read_text("utf-8"))
    return loaded


# --------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("source", ["answers_reference_r.json", "answers_reference.json"])
def test_exact_mcnemar_matches_r_and_exact_enumeration(source: str) -> None:
    rows = _reference(source)["mcnemar"]
    assert len(rows) > 600
    for row in rows:
        result = mcnemar_exact(row["b"], row["c"])
        assert result.discordant == row["b"] + row["c"]
        assert math.isclose(result.p_value, row["p"], rel_tol=1e-9), row


@pytest.mark.parametrize("source", ["answers_reference_r.json", "answers_reference.json"])
def test_fisher_exact_matches_r_and_exact_enumeration(source: str) -> None:
    rows = _reference(source)["fisher"]
    assert len(rows) > 2400
    for row in rows:
        result = fisher_exact(row["a"], row["b"], row["c"], row["d"])
        assert math.isclose(result.p_value, row["p"], rel_tol=1e-9), row


@pytest.mark.parametrize(
    ("table", "degenerate"),
    [
        ((3, 0, 4, 0), True),  # nobody preferred B
        ((0, 0, 5, 6), True),  # no yes at all
        ((5, 6, 0, 0), True),  # no no at all
        ((0, 0, 0, 0), True),
        ((3, 0, 0, 4), False),  # an empty cell is not an empty margin
    ],
)
def test_fisher_marks_a_table_with_an_empty_row_or_column(
    table: tuple[int, int, int, int], degenerate: bool
) -> None:
    assert fisher_exact(*table).degenerate is degenerate


def test_exact_mcnemar_keeps_its_size_under_the_null_by_simulation() -> None:
    """40 comparisons per run, each side yes with probability 0.3 and the two answers of one
    comparison correlated (both yes 0.15): the exact test rejects at most alpha of the time
    (it is conservative: discrete), and not absurdly less."""
    rng = np.random.default_rng(20261203)
    runs, n, alpha = 20_000, 40, 0.05
    # Cells: both yes, A only, B only, neither (A only = B only under the null).
    counts = rng.multinomial(n, [0.15, 0.15, 0.15, 0.55], size=runs)
    only_a, only_b = counts[:, 1], counts[:, 2]
    pairs = np.stack([only_a, only_b], axis=1)
    unique, where = np.unique(pairs, axis=0, return_inverse=True)
    p = np.array([mcnemar_exact(int(a), int(b)).p_value for a, b in unique])[where.ravel()]
    rate = float(np.mean(p <= alpha))
    se = math.sqrt(alpha * (1 - alpha) / runs)
    assert rate <= alpha + 3 * se
    assert rate >= 0.02  # 12 discordant pairs on average: close to 0.05, well above nothing


def test_fisher_keeps_its_size_under_the_null_by_simulation() -> None:
    """40 untied comparisons, A preferred with probability 0.6, yes with probability 0.3 and
    independent of the preference: Fisher's exact test rejects at most alpha of the time."""
    rng = np.random.default_rng(3122026)
    runs, n, alpha = 20_000, 40, 0.05
    p_yes, p_a = 0.3, 0.6
    cells = [p_yes * p_a, p_yes * (1 - p_a), (1 - p_yes) * p_a, (1 - p_yes) * (1 - p_a)]
    tables = rng.multinomial(n, cells, size=runs)
    unique, where = np.unique(tables, axis=0, return_inverse=True)
    p = np.array([fisher_exact(*map(int, t)).p_value for t in unique])[where.ravel()]
    rate = float(np.mean(p <= alpha))
    se = math.sqrt(alpha * (1 - alpha) / runs)
    assert rate <= alpha + 3 * se
    assert rate >= 0.01


# --------------------------------------------------------------------------- the analysis


def _per_option_picks(
    design: Any, yes_a: set[int], yes_b: set[int], *, judge: str = "alice"
) -> list[Pick]:
    """Preference picks whose per-option answers say yes for A's response on ``yes_a`` and
    for B's on ``yes_b``, written as the judge saw them (left / right)."""
    records = preference_picks(design, balanced_outcomes(design, 12, 8), judge=judge)
    picks = []
    for record, entry in zip(records, design["arrangement"], strict=True):
        a, b = entry["trial"] in yes_a, entry["trial"] in yes_b
        left, right = (a, b) if entry["left"] == "A" else (b, a)
        picks.append(
            Pick.from_record(record | {"answers": {ERROR: {"left": left, "right": right}}})
        )
    return picks


def test_per_option_answers_are_mapped_to_sides_through_the_arrangement() -> None:
    design = make_design("preference", 20, extra_questions_per_option=(ERROR,))
    # A is wrong in trials 1..9, B in 1, 2, 15: both 2, A only 7, B only 1, neither 10.
    picks = _per_option_picks(design, set(range(1, 10)), {1, 2, 15})
    (entry,) = answers_summary(design, picks)
    assert entry["about"] == "each response"
    assert entry["unit"] == "one comparison by one judge"
    assert (entry["sides"]["A"]["yes"], entry["sides"]["B"]["yes"]) == (9, 3)
    lo, hi = wilson(9, 20)
    assert math.isclose(entry["sides"]["A"]["yes_rate"]["lo"], lo, rel_tol=1e-9)
    assert math.isclose(entry["sides"]["A"]["yes_rate"]["hi"], hi, rel_tol=1e-9)
    paired = entry["paired"]
    assert (paired["yes_a_no_b"], paired["yes_b_no_a"]) == (7, 1)
    assert (paired["yes_both"], paired["no_both"], paired["n"]) == (2, 10, 20)
    assert math.isclose(paired["p_value"], 18 / 256, rel_tol=1e-12)  # 2 x (1 + 8) / 2^8
    assert paired["degenerate"] is None
    assert entry["statement"] == (
        f"{ERROR!r}, asked of each response: A (model-a) yes 9 of 20 (45%, Wilson 95% interval "
        "26% to 66%); B (model-b) yes 3 of 20 (15%, Wilson 95% interval 5% to 36%). Within the "
        "same comparison yes for A's response only 7, for B's only 1, both 2, neither 10: "
        "exact McNemar, two-sided p = 0.070."
    )


def test_swapping_every_left_and_right_answer_changes_which_side_got_yes() -> None:
    """The same answers given to the other position are about the other side: what the judge
    says of "left" is about whichever side the arrangement put there."""
    design = make_design("preference", 20, extra_questions_per_option=(ERROR,))
    picks = _per_option_picks(design, set(range(1, 10)), {1, 2, 15})
    swapped = []
    for pick in picks:
        said: Any = pick.answers
        turned = {"left": said[ERROR]["right"], "right": said[ERROR]["left"]}
        swapped.append(Pick.from_record(pick.to_record() | {"answers": {ERROR: turned}}))
    (entry,) = answers_summary(design, swapped)
    assert (entry["sides"]["A"]["yes"], entry["sides"]["B"]["yes"]) == (3, 9)
    assert (entry["paired"]["yes_a_no_b"], entry["paired"]["yes_b_no_a"]) == (1, 7)


def test_no_discordant_pair_gets_no_p_value_and_says_why() -> None:
    design = make_design("preference", 20, extra_questions_per_option=(ERROR,))
    picks = _per_option_picks(design, {1, 2, 3}, {1, 2, 3})
    (entry,) = answers_summary(design, picks)
    assert entry["paired"]["p_value"] is None
    assert entry["paired"]["degenerate"] == (
        "no comparison had yes for one response and no for the other"
    )
    assert "A and B never differed within a comparison" in entry["statement"]
    assert "no p-value" in entry["statement"]
    assert "p = 1" not in entry["statement"]


def _per_comparison_picks(design: Any, outcome: dict[int, str], yes: set[int]) -> list[Pick]:
    records = preference_picks(design, outcome)
    return [Pick.from_record(r | {"answers": {REVIEW: r["trial"] in yes}}) for r in records]


def test_per_comparison_answer_against_the_preferred_side_by_fisher() -> None:
    design = make_design("preference", 20, extra_questions=(REVIEW,))
    outcome = balanced_outcomes(design, 10, 6)  # 4 ties
    won_a = sorted(t for t, s in outcome.items() if s == "A")
    won_b = sorted(t for t, s in outcome.items() if s == "B")
    ties = sorted(t for t, s in outcome.items() if s == "tie")
    yes = {*won_a[:8], won_b[0], ties[0]}  # 8 of 10 A wins, 1 of 6 B wins, 1 of 4 ties
    (entry,) = answers_summary(design, _per_comparison_picks(design, outcome, yes))
    assert entry["about"] == "the comparison as a whole"
    assert (entry["comparisons"]["yes"], entry["comparisons"]["n"]) == (10, 20)
    test = entry["association"]
    assert test["table"] == {
        "yes_preferred_a": 8,
        "yes_preferred_b": 1,
        "no_preferred_a": 2,
        "no_preferred_b": 5,
    }
    assert test["ties_left_out"] == 4
    reference = {
        (r["a"], r["b"], r["c"], r["d"]): r["p"]
        for r in _reference("answers_reference_r.json")["fisher"]
    }
    # fisher.test(matrix(c(8, 2, 1, 5), 2)) is not in the grid of small cells: by hand, as
    # the exact enumeration does it.
    assert (8, 1, 2, 5) not in reference or math.isclose(
        test["p_value"], reference[(8, 1, 2, 5)], rel_tol=1e-9
    )
    assert math.isclose(test["p_value"], fisher_exact(8, 1, 2, 5).p_value, rel_tol=1e-12)
    assert "yes in 8 of 10 comparisons won by A and 1 of 6 won by B" in entry["statement"]
    assert "Fisher's exact test, two-sided p = 0.035" in entry["statement"]
    assert "1 of 4 ties yes, ties left out of that test" in entry["statement"]


@pytest.mark.parametrize(
    ("wins", "losses", "yes", "said"),
    [
        (0, 0, "all", "every comparison was a tie"),
        (12, 8, "all", "every answer in the untied comparisons was yes"),
        (12, 8, "none", "every answer in the untied comparisons was no"),
        (20, 0, "some", "B was preferred in none of the untied comparisons"),
    ],
)
def test_a_table_fisher_cannot_test_is_said_in_words(
    wins: int, losses: int, yes: str, said: str
) -> None:
    design = make_design("preference", 20, extra_questions=(REVIEW,))
    outcome = balanced_outcomes(design, wins, losses)
    trials = sorted(outcome)
    chosen = {"all": set(trials), "none": set(), "some": set(trials[:5])}[yes]
    (entry,) = answers_summary(design, _per_comparison_picks(design, outcome, chosen))
    assert entry["association"]["p_value"] is None
    assert entry["association"]["degenerate"] == said
    assert f"cannot be tested: {said}" in entry["statement"]
    assert "p = 1" not in entry["statement"]


def test_judges_who_share_trials_are_tested_alone_and_dealt_judges_are_pooled() -> None:
    design = make_design("preference", 20, extra_questions_per_option=(ERROR,))
    alice = _per_option_picks(design, set(range(1, 10)), {1, 2, 15}, judge="alice")
    bob = _per_option_picks(design, {1, 2}, {3, 4, 5}, judge="bob")
    (shared,) = answers_summary(design, alice + bob)
    assert shared["pooled"] is False
    assert shared["shared_trials"] == 20
    assert "sides" not in shared
    assert "paired" not in shared
    assert [c["judge"] for c in shared["per_judge"]] == ["alice", "bob"]
    assert shared["per_judge"][0]["paired"]["yes_a_no_b"] == 7
    assert shared["per_judge"][1]["paired"]["yes_b_no_a"] == 3
    assert "so each judge is tested alone: alice: " in shared["statement"]
    # On the result screen each judge tested alone has a line of their own under the question.
    from blindtest.present.render import answers_lines as _answers_lines

    lines = _answers_lines({"answers": [shared]})  # type: ignore[typeddict-item]
    assert lines[1].endswith("so each judge is tested alone:")
    assert lines[2].startswith("    alice: A (model-a) yes 9 of 20")
    assert lines[3].startswith("    bob: A (model-a) yes 2 of 20")
    # Dealt: alice the first ten trials, bob the other ten; pooled, one comparison by one judge.
    dealt = [p for p in alice if p.trial <= 10] + [p for p in bob if p.trial > 10]
    (pooled,) = answers_summary(design, dealt)
    assert pooled["pooled"] is True
    assert pooled["paired"]["n"] == 20
    assert "Pooled over 2 judges, who answered no trial in common" in pooled["statement"]
    assert len(pooled["per_judge"]) == 2


def test_hidden_controls_are_left_out_and_counted() -> None:
    design = make_design(
        "preference",
        16,
        prompts=numbered_prompts(20),
        extra_questions_per_option=(ERROR,),
        controls=4,
    )
    controls = {e["trial"] for e in design["arrangement"] if "control" in e}
    assert len(controls) == 4
    picks = [
        Pick.from_record(
            {"trial": e["trial"], "judge": "alice", "pick": "left",
             "answers": {ERROR: {"left": True, "right": e["trial"] in controls}}}
        )
        for e in design["arrangement"]
    ]  # fmt: skip
    (entry,) = answers_summary(design, picks)
    assert entry["controls_left_out"] == 4
    assert entry["paired"]["n"] == 16
    assert "4 answers on hidden controls (one model shown twice) left out." in entry["statement"]


def test_result_screen_and_report_page_say_each_question_in_plain_words(tmp_path: Path) -> None:
    run = make_run(
        tmp_path, "preference", 20, extra_questions=(REVIEW,), extra_questions_per_option=(ERROR,)
    )
    design = load(run)
    records = preference_picks(design, balanced_outcomes(design, 12, 8))
    for record, entry in zip(records, design["arrangement"], strict=True):
        wrong_a = entry["trial"] <= 9
        left, right = (wrong_a, False) if entry["left"] == "A" else (False, wrong_a)
        record["answers"] = {ERROR: {"left": left, "right": right}, REVIEW: entry["trial"] > 15}
    write_picks(run / artifacts.PICKS, records)
    result = cli("analyze", run, "--html", run / "report.html")
    assert result.exit_code == 0, result.output
    screen = " ".join(result.stdout.split())
    assert "Answers to the extra questions:" in screen
    assert f"{ERROR!r}, asked of each response: A (model-a) yes 9 of 20" in screen
    assert "for A's response only 9, for B's only 0" in screen
    assert "exact McNemar, two-sided p = 0.0039" in screen
    assert f"{REVIEW!r}, asked once per comparison (of neither response alone)" in screen
    page = (run / "report.html").read_text("utf-8")
    assert "exact McNemar" in page
    assert "Fisher&#39;s exact" in page
    assert "<th>yes for A only</th>" in page
    verified = cli("verify", run)
    assert verified.exit_code == 0, verified.output


def test_bt_verify_recomputes_the_extra_questions(tmp_path: Path) -> None:
    run = make_run(tmp_path, "preference", 20, extra_questions_per_option=(ERROR,))
    design = load(run)
    records = [p.to_record() for p in _per_option_picks(design, set(range(1, 10)), {1, 2, 15})]
    write_picks(
        run / artifacts.PICKS, [{k: v for k, v in r.items() if k != "schema"} for r in records]
    )
    assert cli("analyze", run).exit_code == 0
    report = read_report(run)
    report["answers"][0]["paired"]["p_value"] = 0.5
    (run / artifacts.REPORT).write_bytes(artifacts.dump_line(report))
    verified = cli("verify", run)
    assert verified.exit_code == 1
    assert "answers" in verified.output
    assert "p_value" in verified.output


# --------------------------------------------------------------------------- the contract


@pytest.mark.parametrize(
    ("answers", "said"),
    [
        ({ERROR: True}, f"answers {ERROR!r} with one true for the comparison, but the design "
         'asks it of each option: give {"left": true/false, "right": true/false}'),
        ({REVIEW: {"left": True, "right": False}}, f"answers {REVIEW!r} per option, but the "
         "design asks it once per comparison: give true or false"),
        ({"Is it kind?": True}, "answers a question the design does not ask: 'Is it kind?'"),
    ],
)  # fmt: skip
def test_an_answer_in_the_wrong_form_is_refused_with_one_line(
    tmp_path: Path, answers: dict[str, Any], said: str
) -> None:
    run = make_run(
        tmp_path, "preference", 20, extra_questions=(REVIEW,), extra_questions_per_option=(ERROR,)
    )
    design = load(run)
    records = preference_picks(design, balanced_outcomes(design, 12, 8))
    records[2]["answers"] = answers
    write_picks(run / artifacts.PICKS, records)
    result = cli("analyze", run)
    assert result.exit_code == 2
    assert result.stderr == f"blindtest: error: {artifacts.PICKS}:3: {said}\n"
    assert not (run / artifacts.REPORT).exists()


def test_the_schema_refuses_a_per_option_answer_without_both_options(tmp_path: Path) -> None:
    run = make_run(tmp_path, "preference", 20, extra_questions_per_option=(ERROR,))
    design = load(run)
    records = preference_picks(design, balanced_outcomes(design, 12, 8))
    records[0]["answers"] = {ERROR: {"left": True}}
    write_picks(run / artifacts.PICKS, records)
    result = cli("analyze", run)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"blindtest: error: {artifacts.PICKS}:1: /answers/")
    assert "\n" not in result.stderr.rstrip("\n")


def test_design_records_questions_of_each_option_apart_and_only_when_asked(
    tmp_path: Path,
) -> None:
    plain = make_design("preference", 20, extra_questions=(REVIEW,))
    assert "extra_questions_per_option" not in plain["judging"]  # earlier designs keep bytes
    both = make_design(
        "preference", 20, extra_questions=(REVIEW,), extra_questions_per_option=(ERROR,)
    )
    assert both["judging"]["extra_questions"] == [REVIEW]
    assert both["judging"]["extra_questions_per_option"] == [ERROR]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--protocol", "triangle", "--ask-each", ERROR),
         "--ask-each is for the preference protocol only (a triangle judge answers no extra "
         "questions); drop --ask-each or use --protocol preference"),
        (("--protocol", "preference", "--ask", ERROR, "--ask-each", ERROR),
         f"the question {ERROR!r} is given in --ask and --ask-each; answers are keyed by the "
         "question, so ask it once, either of the comparison (--ask) or of each option "
         "(--ask-each)"),
        (("--protocol", "preference", "--ask-each", ERROR, "--ask-each", ERROR),
         f"the question {ERROR!r} is given twice; answers are keyed by the question, so ask "
         "it once, either of the comparison (--ask) or of each option (--ask-each)"),
        (("--protocol", "preference", "--ask-each", "  "),
         "--ask-each needs the words of a question, got '  '"),
    ],
)  # fmt: skip
def test_bt_design_refuses_extra_questions_it_cannot_ask(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    run = tmp_path / "run"
    result = cli("design", run, "--demo", "--temperature", "1", "--trials", "6", *args)
    assert result.exit_code == 2
    assert result.stderr == f"blindtest: error: {said}\n"
    assert not run.exists() or not any(run.iterdir())
