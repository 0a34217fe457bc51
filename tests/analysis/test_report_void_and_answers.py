"""A void analysis reveals nothing, --ask answers are tallied, the result screen says what explains
the result and what to do next, and control characters from files are neutralised."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, cast

import orjson
import pytest
from scipy import stats as scipy_stats

from blindtest.analysis.api import VOID_KEYS, build_report
from blindtest.errors import BadInput
from blindtest.model.assignment import assign
from blindtest.model.picks import Pick
from blindtest.present.hints import stage_command
from blindtest.present.render import format_summary, render_html
from blindtest.rundir import artifacts
from blindtest.rundir.types import DesignRecord, ReportRecord

from report_runs import (
    balanced_outcomes,
    cli,
    load,
    make_design,
    make_run,
    pair_picks,
    preference_picks,
    read_report,
    triangle_picks,
    wilson,
    write_design_run,
    write_picks,
)
from screen_text import flat, paragraphs

REVEALING = ("length bot", "duplicate", "census", "p =", "p <", "correct", "interval", "A (")


def audited(tmp_path: Path, judged: int) -> Path:
    run = make_run(tmp_path)  # side A always longer: the length bot scores 20/20
    write_picks(run / artifacts.PICKS, triangle_picks(load(run), 10, trials=range(1, judged + 1)))
    assert cli("audit", run).exit_code == 0
    return run


def test_void_analysis_prints_one_line_and_reveals_nothing(tmp_path: Path) -> None:
    run = audited(tmp_path, 12)
    result = cli("analyze", run, "--html", tmp_path / "r.html")
    assert result.exit_code == 1
    assert result.stdout == ""
    # The command goes whole on a line of its own (pasted as printed), naming the judge.
    command = stage_command("judge", run, "--judge-id", "alice")
    assert result.stderr == f"void: 12 of 20 judged; finish with:\n{command}\n"
    report = read_report(run)
    assert set(report) <= {*VOID_KEYS, "picks_files"}
    for key in ("audit", "per_trial", "p_value", "pc", "pd", "correct", "models", "appendix"):
        assert key not in report
    assert report["n"] == 12
    assert report["verdict"] == "void"
    html = (tmp_path / "r.html").read_text()
    for word in REVEALING:
        assert word not in html.split("</h1>")[1], word
    as_json = cli("analyze", run, "--json", "--force")
    assert orjson.loads(as_json.stdout) == read_report(run)
    assert "void: Void:" not in result.stderr + as_json.stderr


def test_reveal_void_shows_everything_and_says_so_loudly(tmp_path: Path) -> None:
    run = audited(tmp_path, 12)
    result = cli("analyze", run, "--reveal-void")
    assert result.exit_code == 1
    assert "length bot 20/20" in flat(result.stdout)
    assert paragraphs(result.stdout)[3].startswith("REVEALED BEFORE THE END (--reveal-void)")
    assert "can no longer judge this run blind" in result.stderr
    assert "is not valid for an unfinished fixed design" in flat(result.stdout)  # p is not a result
    assert "Next:" not in flat(result.stdout)  # the next step is to finish, named on stderr
    report = read_report(run)
    assert report["per_trial"]
    assert report["audit"]["bots"]["length"]["correct"] == 20
    assert report["analysis_options"]["reveal_void"] is True
    assert cli("verify", run).exit_code == 0  # the revealed report recomputes


def test_a_sequential_design_that_stopped_early_is_not_void(tmp_path: Path) -> None:
    run = write_design_run(tmp_path, make_design("triangle", 20, sequential=True))
    write_picks(run / artifacts.PICKS, triangle_picks(load(run), 4, trials=range(1, 5)))
    result = cli("analyze", run)
    assert result.exit_code == 0
    assert read_report(run)["verdict"] == "distinguished"
    assert "void" not in result.stderr


def test_void_line_names_the_picks_file_of_a_second_judge(tmp_path: Path) -> None:
    run = audited(tmp_path, 20)
    bob = write_picks(
        run / "picks-bob.jsonl", triangle_picks(load(run), 5, judge="bob", trials=range(1, 8))
    )
    result = cli("analyze", run, "--picks", run / artifacts.PICKS, "--picks", bob)
    assert result.exit_code == 1
    expected = stage_command("judge", run, "--out", bob, "--judge-id", "bob")
    assert result.stderr == f"void: judge 'bob' 7 of 20 judged; finish with:\n{expected}\n"


# --------------------------------------------------------------------------- panels' shares

PANEL = ("ann", "ben", "cat")


def _panel_run(tmp_path: Path, protocol: str, judged: dict[str, int] | None = None) -> Path:
    """A 12-trial design judged by a panel of three dealt 8 trials each (``bt-judge --web
    --panel ann,ben,cat --per-judge 8``); ``judged``: how many of their trials some judged."""
    run = write_design_run(tmp_path, make_design(protocol, 12))
    design = load(run)
    panel = {"reviewers": list(PANEL), "per_judge": 8}
    shares = assign(str(design["seed"]), 12, PANEL, 8)
    for name in PANEL:
        trials = sorted(shares[name])[: (judged or {}).get(name, 8)]
        if protocol == "pair":
            records = [r for r in pair_picks(design, 6, judge=name) if r["trial"] in trials]
        else:
            records = triangle_picks(design, 6, judge=name, trials=trials)
        write_picks(run / f"picks-{name}.jsonl", [r | {"panel": panel} for r in records])
    return run


def _panel_args(run: Path) -> list[Any]:
    return [a for name in PANEL for a in ("--picks", run / f"picks-{name}.jsonl")]


@pytest.mark.parametrize("protocol", ["triangle", "pair"])
def test_a_panel_that_judged_every_trial_dealt_to_it_is_analysed_not_void(
    tmp_path: Path, protocol: str
) -> None:
    # A pair design used to need every reviewer on every trial: a panel dealt 8 of 12 each,
    # every trial judged twice, came out "only 8 of 12 trials were judged".
    run = _panel_run(tmp_path, protocol)
    result = cli("analyze", run, *_panel_args(run))
    assert result.exit_code == 0, result.stderr
    report = read_report(run)
    assert report["verdict"] in ("distinguished", "not distinguished")
    assert sorted(report["judges"]) == list(PANEL)


@pytest.mark.parametrize("protocol", ["triangle", "pair"])
def test_a_panel_reviewer_short_of_their_share_voids_it_counted_against_that_share(
    tmp_path: Path, protocol: str
) -> None:
    # ben stopped after 5 of his 8, cat after 6 of hers: the line names the one furthest from
    # finishing and counts against the trials dealt to him, not the design's 12.
    run = _panel_run(tmp_path, protocol, judged={"ben": 5, "cat": 6})
    result = cli("analyze", run, *_panel_args(run))
    assert result.exit_code == 1
    report = read_report(run)
    assert report["verdict"] == "void"
    assert report["statement"].startswith(
        "Void: judge 'ben' judged only 5 of the 8 trials dealt to them. A fixed design must be "
        "finished;"
    )


# --------------------------------------------------------------------------- --ask answers


def _picks_with_answers(design: DesignRecord, answers: list[Any]) -> list[Pick]:
    outcome = balanced_outcomes(design, 12, 8)
    records = preference_picks(design, outcome)
    return [
        Pick.from_record(r | {"answers": {"Any factual error?": a}})
        for r, a in zip(records, answers, strict=True)
    ]


def test_per_option_answers_get_wilson_per_side_and_exact_mcnemar(tmp_path: Path) -> None:
    design = make_design("preference", 20, extra_questions_per_option=("Any factual error?",))
    # Per option as displayed: A is wrong in 9 trials, B in 3; both in 2 (A only 7, B only 1).
    yes_a = set(range(1, 10))
    yes_b = {1, 2, 15}
    answers = []
    for entry in design["arrangement"]:
        t = entry["trial"]
        a, b = t in yes_a, t in yes_b
        left, right = (a, b) if entry["left"] == "A" else (b, a)
        answers.append({"left": left, "right": right})
    picks = _picks_with_answers(design, answers)
    report = build_report(design, "0" * 64, picks, inputs={}).report
    (asked,) = report["answers"]
    assert asked["about"] == "each response"
    assert (asked["sides"]["A"]["yes"], asked["sides"]["B"]["yes"]) == (9, 3)
    for side, k in (("A", 9), ("B", 3)):
        lo, hi = wilson(k, 20)  # mpmath, see report_runs
        rate = asked["sides"][side]["yes_rate"]
        assert math.isclose(rate["lo"], lo, rel_tol=1e-9)
        assert math.isclose(rate["hi"], hi, rel_tol=1e-9)
    paired = asked["paired"]
    assert (paired["yes_a_no_b"], paired["yes_b_no_a"]) == (7, 1)
    # scipy.stats.binomtest(7, 8, 0.5).pvalue == 0.0703125 (= 2 * 9/256, by hand)
    assert math.isclose(paired["p_value"], scipy_stats.binomtest(7, 8, 0.5).pvalue, rel_tol=1e-12)
    assert math.isclose(paired["p_value"], 18 / 256, rel_tol=1e-12)
    assert "exact McNemar, two-sided p = 0.070" in asked["statement"]
    assert "asked of each response" in asked["statement"]


def test_per_comparison_answers_are_tallied_and_say_they_cannot_be_split(
    tmp_path: Path,
) -> None:
    run = make_run(tmp_path, "preference", 20, extra_questions=("Was either answer wrong?",))
    design = load(run)
    records = preference_picks(design, balanced_outcomes(design, 12, 8))
    for i, r in enumerate(records):
        r["answers"] = {"Was either answer wrong?": i < 5}
    write_picks(run / artifacts.PICKS, records)
    result = cli("analyze", run)
    (entry,) = read_report(run)["answers"]
    assert entry["about"] == "the comparison as a whole"
    assert (entry["comparisons"]["yes"], entry["comparisons"]["n"]) == (5, 20)
    lo, _hi = wilson(5, 20)
    assert math.isclose(entry["comparisons"]["yes_rate"]["lo"], lo, rel_tol=1e-9)
    assert "asked once per comparison (of neither response alone)" in flat(result.stdout)
    assert "Answers to the extra questions:" in result.stdout


# --------------------------------------------------------------------------- the screen


def test_result_screen_order_verdict_sure_size_bots_next_technical(tmp_path: Path) -> None:
    run = audited(tmp_path, 20)
    write_picks(run / artifacts.PICKS, triangle_picks(load(run), 19))
    printed = cli("analyze", run, "--force").stdout
    screen, lines = flat(printed), paragraphs(printed)
    order = [
        next(i for i, s in enumerate(lines) if s.startswith("You told them apart")),
        next(i for i, s in enumerate(lines) if s.startswith("How sure: ")),
        next(i for i, s in enumerate(lines) if s.startswith("How big: ")),
        next(i for i, s in enumerate(lines) if s.startswith("What a bot can explain")),
        next(i for i, s in enumerate(lines) if s.startswith("Next: ")),
        next(i for i, s in enumerate(lines) if s.startswith("Technical figures")),
    ]
    assert order == sorted(order)
    assert "95% interval" in lines[order[2]]
    assert "(95% " not in screen.replace("(95% interval", "")
    assert "words (mean)" in screen
    assert "em dashes" in screen
    assert "bullet items" in screen
    command = lines[order[4] + 1].strip()
    assert command.startswith(stage_command("design", "NEW-RUN").rsplit(" ", 1)[0])
    assert "--length-band" in command
    assert screen.count("one-sided exact binomial") == 1  # the test is named once
    assert "Thurstonian model (" in screen  # jargon with its gloss


def test_pair_dprime_is_never_printed_as_inf(tmp_path: Path) -> None:
    run = write_design_run(tmp_path, make_design("pair", 20, temperature=0.0))
    write_picks(run / artifacts.PICKS, pair_picks(load(run), 20))
    screen = cli("analyze", run).stdout
    assert "inf" not in screen
    assert "d' (secondary)      unbounded" in screen


def test_preference_leads_with_the_winner_and_one_position_line(tmp_path: Path) -> None:
    run = make_run(tmp_path, "preference", 30)
    design = load(run)
    write_picks(run / artifacts.PICKS, preference_picks(design, balanced_outcomes(design, 5, 22)))
    assert cli("audit", run).exit_code == 0
    printed = cli("analyze", run).stdout
    screen, lines = flat(printed), paragraphs(printed)
    assert lines[3].startswith("B (model-b) is preferred: it won 22 of 27 untied comparisons.")
    assert lines[5].startswith("How big: B (model-b) won 81% of untied comparisons")
    assert sum(1 for s in lines if s.startswith("Position")) == 1
    assert "duplicate" not in screen
    assert "same pick as the judge" not in screen
    assert "length: A's answer was the longer in" in screen


def test_control_characters_from_files_are_neutralised(tmp_path: Path) -> None:
    run = make_run(tmp_path, "preference", 20)
    design = load(run)
    # A judge id with control characters is refused when the picks are read;
    # a reason from an external file is kept as written and neutralised wherever it is shown.
    bad_id = preference_picks(design, balanced_outcomes(design, 10, 10), judge="al\x1b[2Jice")
    write_picks(run / artifacts.PICKS, bad_id)
    refused = cli("analyze", run)
    assert refused.exit_code == 2
    assert "\x1b" not in refused.stderr
    records = preference_picks(design, balanced_outcomes(design, 10, 10), judge="alice")
    records[0]["reason"] = "too long\x1b[D\x1b[Dshort\rX"
    write_picks(run / artifacts.PICKS, records)
    result = cli("analyze", run, "--html", tmp_path / "r.html")
    assert result.exit_code == 0, result.stderr
    page = (tmp_path / "r.html").read_text()
    for text in (
        result.stdout,
        page,
        format_summary(cast(ReportRecord, read_report(run)), width=80),
    ):
        assert "\x1b" not in text
        assert "\r" not in text
    assert "\\x1b[D" in render_html(cast(ReportRecord, read_report(run)))


def test_a_void_bot_run_is_finished_by_a_command_that_works(tmp_path: Path) -> None:
    run = make_run(tmp_path)
    done = cli("judge", run, "--judge", "bot:length")
    assert done.exit_code == 0
    lines = (run / artifacts.PICKS).read_bytes().splitlines(keepends=True)
    (run / artifacts.PICKS).write_bytes(b"".join(lines[:9]))
    result = cli("analyze", run)
    command = stage_command("judge", run, "--judge", "bot:length", "--force")
    assert result.stderr == f"void: 9 of 20 judged; finish with:\n{command}\n"
    assert cli("judge", run, "--judge", "bot:length", "--force").exit_code == 0
    assert cli("analyze", run, "--force").exit_code == 0


def test_the_schema_accepts_a_minimal_void_report_and_only_a_void_one() -> None:
    void = {
        "schema": "blindtest/report@1",
        "design_sha256": "0" * 64,
        "inputs": {},
        "protocol": "triangle",
        "n": 3,
        "verdict": "void",
        "statement": "Void: only 3 of 20 trials were judged.",
    }
    artifacts.validate(void, "report", "report.json")
    golden = Path(__file__).resolve().parents[2] / "examples" / "run" / "report.json"
    artifacts.validate(orjson.loads(golden.read_bytes()), "report", "report.json")
    with pytest.raises(BadInput, match="'per_trial' is a required property"):
        artifacts.validate(
            void
            | {"verdict": "not distinguished"}
            | {"audit": None, "p_value": 0.5, "channels_open": []},
            "report",
            "report.json",
        )
