"""Style control in a preference report: the style differences of each comparison's answers,
one observation per trial, the words the result screen and the report page use (secondary;
separation said in words, no number the fit cannot stand behind), and bt-verify recomputing
it. The statistics themselves are checked in test_style_control.py."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest
from test_report_page_sections import Page

from blindtest.analysis.style import markdown_density, style_differences
from blindtest.rundir import artifacts
from blindtest.simulator import Simulator

from judge_runs import make_run as make_judge_run
from llm_runs import llm, make_run
from report_runs import preference_picks, write_picks
from screen_text import flat

SECONDARY = "Style control (secondary: the verdict above does not use it)"


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDTEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def _report(run: Path) -> dict[str, Any]:
    return dict(orjson.loads((run / artifacts.REPORT).read_bytes()))


def _exit_the_gates_give(report: Mapping[str, Any]) -> int:
    return 1 if report["verdict"] == "void" or report.get("gates_failed") else 0


def test_style_differences_are_words_and_markdown_density_as_normalised_differences() -> None:
    a = "# Title\n\n- one item here\n- two **bold** item\n\nSome prose."
    b = "Plain words only here"
    # 12 words; a header, two list items and one bold span: 4 marks, 33.3 per 100 words.
    assert markdown_density(a) == pytest.approx(100 * 4 / 12)
    assert markdown_density(b) == 0.0
    assert style_differences(a, b) == pytest.approx(((12 - 4) / (12 + 4), 1.0))
    assert style_differences(b, a) == pytest.approx((-0.5, -1.0))
    numbered = "1. first\n2) second __strong__ word"
    assert markdown_density(numbered) == pytest.approx(100 * 3 / 6)
    assert style_differences("", "") == (0.0, 0.0)
    assert style_differences("same words", "other words") == (0.0, 0.0)


def _one_word_apart(root: Path, items: int, seed: int) -> tuple[Path, Path]:
    """Two candidates' answers to ``items`` prompts that differ by one word, the longer one on
    either side at random."""
    rng = random.Random(seed)
    words = ["the", "a", "an", "answer", "is", "that", "this", "we", "it", "to", "of", "in"]
    a, b = root / "model-a", root / "model-b"
    a.mkdir()
    b.mkdir()
    for i in range(1, items + 1):
        base = " ".join(rng.choice(words) for _ in range(rng.randint(30, 90)))
        longer_a = rng.random() < 0.5
        (a / f"q{i:03d}.md").write_text(base + (" more" if longer_a else "") + "\n")
        (b / f"q{i:03d}.md").write_text(base + ("" if longer_a else " more") + "\n")
    return a, b


def test_judge_that_always_takes_the_longer_answer_is_reported_separated_in_words(
    invoke: Any, tmp_path: Path
) -> None:
    a, b = _one_word_apart(tmp_path, 200, seed=7)
    run = tmp_path / "run"
    made = invoke(
        "design", run, "--from-dirs", a, b, "--protocol", "preference", "--trials", 200,
        "--seed", "1",
    )  # fmt: skip
    assert made.exit_code == 0, made.stderr
    assert invoke("generate", run, "--quiet").exit_code == 0
    assert invoke("judge", run, "--judge", "bot:length", "--quiet").exit_code == 0
    page = tmp_path / "page.html"
    analyzed = invoke("analyze", run, "--html", page)
    report = _report(run)
    assert analyzed.exit_code == _exit_the_gates_give(report), analyzed.output
    assert "Traceback" not in analyzed.output
    style = report["style_control"]
    assert (style["n"], style["fitted"]) == (200, True)
    assert style["separation"]["status"] == "complete"
    assert style["separation"]["by"] == {"length": 1}
    assert style["a_strength"] == {"estimate": None, "lo": None, "hi": None}
    assert style["coefficients"]["length"]["status"] == "separated"
    assert style["coefficients"]["markdown"]["status"] == "no variation"
    # No p-value after "the picks are separated": the words say what decided every pick.
    assert style["lr_test"] is None
    assert style["lr_test_withheld"] == "separated"
    screen = flat(analyzed.stdout)
    assert "likelihood-ratio test" not in screen
    assert "No test of the style terms: the picks are separated" in screen
    assert SECONDARY in screen
    assert (
        "The picks are separated by length: every pick went to the longer answer. The judge's "
        "choices follow length completely, so no strength net of style can be estimated and no "
        "estimate is given." in screen
    )
    assert "A's strength with style held equal: not estimable from these picks" in screen
    assert "length: separated; not estimable." in screen
    assert "log-odds per" not in screen
    shown = Page(page.read_text())
    section = shown.section("style-control")
    assert section.startswith("Style control (secondary: the verdict does not use it)")
    assert "no strength net of style can be estimated" in section
    assert "separated: the picks follow it completely; nothing to estimate" in section
    # bt-verify recomputes the report, style control included, and it matches.
    verified = invoke("verify", run)
    assert verified.exit_code == 0, verified.output
    assert "verified: everything recomputes" in verified.stdout


def _texts(plan: Mapping[int, tuple[int, int]]) -> Any:
    """Options whose word counts are ``plan[trial]`` = (A's, B's), in display order."""

    def texts(trial: int, entry: Mapping[str, Any]) -> list[str]:
        words_a, words_b = plan[trial]
        a = " ".join(["alpha"] * words_a)
        b = " ".join(["beta"] * words_b)
        return [a, b] if entry["left"] == "A" else [b, a]

    return texts


def test_small_run_whose_picks_follow_length_where_it_differs_says_so_without_a_number(
    invoke: Any, tmp_path: Path
) -> None:
    # 12 comparisons: 8 of unequal length, each won by the longer answer; 4 of equal length,
    # split 2-2. Ordinary data at this size, and quasi-separated by length.
    plan = {t: (41 + 3 * (t % 3), 40) if t % 2 else (40, 41 + t % 4) for t in range(1, 9)}
    plan |= {t: (50, 50) for t in range(9, 13)}
    outcome = {t: "A" if plan[t][0] > plan[t][1] else "B" for t in range(1, 9)}
    outcome |= {9: "A", 10: "B", 11: "A", 12: "B"}
    run = make_judge_run(tmp_path, "preference", trials=12, texts=_texts(plan))
    design = artifacts.load_design(run).design
    write_picks(run / artifacts.PICKS, preference_picks(design, outcome))
    page = tmp_path / "page.html"
    analyzed = invoke("analyze", run, "--html", page)
    report = _report(run)
    assert analyzed.exit_code == _exit_the_gates_give(report), analyzed.output
    style = report["style_control"]
    separation = style["separation"]
    assert (separation["status"], separation["determined"]) == ("quasi", 8)
    assert separation["terms"] == ["length"]
    assert separation["infinite"] == {"length": 1}
    length = style["coefficients"]["length"]
    assert length["status"] == "separated"
    screen = flat(analyzed.stdout)
    assert (
        "The picks are partly separated by length: in all 8 comparisons whose lengths differed "
        "the pick went to the longer answer." in screen
    )
    # What follows for the fit is the technical section's.
    technical = screen[screen.index("Technical figures:") :]
    assert (
        "By maximum likelihood the estimate of length is infinite, so the fit is Firth's "
        "penalised likelihood" in technical
    )
    assert f"length: separated; at least {length['lo']:+.2f} (95% profile penalised" in screen
    assert "no upper bound and no estimate" in screen
    # Firth's own estimate, set by its penalty, is not printed; A's strength is (the four
    # comparisons of equal length measure it).
    assert f"{length['estimate']:+.2f}" not in screen
    assert style["a_strength_status"] == "estimated"
    strength = style["a_strength"]
    assert f"A's strength with style held equal: {strength['estimate']:+.2f}" in screen
    assert "(95% profile penalised-likelihood interval" in screen
    assert "A's win rate at equal style" in screen
    row = next(r for r in Page(page.read_text()).section("style-control").split("length (")[1:])
    assert f"at least {length['lo']:+.2f}" in row


def test_fewer_than_ten_untied_comparisons_are_not_fitted_and_the_screen_says_why(
    invoke: Any, tmp_path: Path
) -> None:
    run = make_judge_run(tmp_path, "preference", trials=8)
    design = artifacts.load_design(run).design
    outcome = {t: "A" for t in range(1, 7)} | {7: "tie", 8: "tie"}
    write_picks(run / artifacts.PICKS, preference_picks(design, outcome))
    analyzed = invoke("analyze", run)
    style = _report(run)["style_control"]
    assert (style["fitted"], style["n"]) == (False, 6)
    assert (
        "Style control (secondary): not fitted; it needs at least 10 untied comparisons and "
        "this run has 6." in flat(analyzed.stdout)
    )


def test_one_observation_per_trial_the_majority_of_its_judges_ties_left_out(
    invoke: Any, tmp_path: Path
) -> None:
    plan = {t: (30 + t, 30 + (t * 7) % 13) for t in range(1, 17)}
    run = make_judge_run(tmp_path, "preference", trials=16, texts=_texts(plan))
    design = artifacts.load_design(run).design
    first = {t: "A" if t % 3 else "B" for t in range(1, 17)}
    second = {t: first[t] if t <= 12 else ("B" if first[t] == "A" else "A") for t in first}
    alice = write_picks(run / "alice.jsonl", preference_picks(design, first, judge="alice"))
    bob = write_picks(run / "bob.jsonl", preference_picks(design, second, judge="bob"))
    invoke("analyze", run, "--picks", alice, "--picks", bob)
    style = _report(run)["style_control"]
    # Trials 13-16 split 1-1: tied outcomes, left out as the headline test leaves them out.
    assert style["n"] == 12
    assert style["a_wins"] == sum(first[t] == "A" for t in range(1, 13))
    assert style["unit"] == "a trial's outcome (the majority of its judges), ties left out"


def test_fair_llm_judge_style_control_sits_after_the_judges_on_the_report_page(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "fair", "preference", trials=20)
    out = run / "picks-fair.jsonl"
    judged = llm(invoke, run, "sim-judge-fair", "--out", out, url=simulator.base_url)
    assert judged.exit_code == 0, judged.output
    html = tmp_path / "fair.html"
    analyzed = invoke("analyze", run, "--picks", out, "--html", html, "--force")
    report = _report(run)
    assert analyzed.exit_code == _exit_the_gates_give(report), analyzed.output
    style = report["style_control"]
    assert style["fitted"] is True
    screen = flat(analyzed.stdout)
    assert SECONDARY in screen
    # sim-large writes more than sim-small in every comparison: equal style is outside the
    # data, so A's win rate there has no number and the style terms no test.
    assert style["a_strength_status"] == "extrapolated"
    assert style["lr_test"] is None
    assert "A's win rate at equal style: cannot be estimated. A's answer was longer" in screen
    assert "likelihood-ratio test" not in screen
    page = Page(html.read_text())
    section = page.section("style-control")
    for line in style["lines"]:
        assert re.sub(r"\s+", " ", line).strip() in section
    assert "estimate (log-odds)" in section
    assert page.order.index("style-control") > page.order.index("llm-judges")
    assert page.order.index("style-control") < page.order.index("bots")
    # Nothing printed that the fit cannot stand behind: every separated or left-out term is
    # words in the table.
    for name, term in style["coefficients"].items():
        if term["status"] != "estimated" and term["estimate"] is not None:
            assert f"{term['estimate']:+.2f}" not in section, name


def test_llm_judge_that_takes_the_longer_chat_answer_every_time_is_said_in_words(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    # sim-large (A) always writes more than sim-small (B): an always-longer judge picks A in
    # every comparison, and strength and length cannot be told apart.
    run = make_run(invoke, simulator.base_url, tmp_path / "longer", "preference", trials=20)
    judged = llm(invoke, run, "sim-judge-longer", url=simulator.base_url)
    assert judged.exit_code == 0, judged.output
    analyzed = invoke("analyze", run)
    report = _report(run)
    assert analyzed.exit_code == _exit_the_gates_give(report), analyzed.output
    style = report["style_control"]
    assert (style["n"], style["a_wins"]) == (20, 20)
    assert style["separation"]["status"] == "complete"
    screen = flat(analyzed.stdout)
    assert SECONDARY in screen
    assert (
        "The picks are separated: A won every one of the 20 comparisons, and every pick went "
        "to the longer answer, so strength and style cannot be weighed against each other and "
        "no estimate is given" in screen
    )
    assert "A's strength with style held equal: not estimable from these picks" in screen


def test_a_longer_in_every_comparison_says_the_win_rate_at_equal_style_cannot_be_estimated(
    invoke: Any, tmp_path: Path
) -> None:
    # 20 comparisons; A's answer longer in every one (by 2 to 20 words of 40); the picks
    # split 12-8 without regard to length. No comparison shows A and B at equal length.
    plan = {t: (42 + (t * 7) % 19, 40) for t in range(1, 21)}
    outcome = {t: "A" if t % 5 in (0, 1, 3) else "B" for t in range(1, 21)}
    run = make_judge_run(tmp_path, "preference", trials=20, texts=_texts(plan))
    design = artifacts.load_design(run).design
    write_picks(run / artifacts.PICKS, preference_picks(design, outcome))
    page = tmp_path / "page.html"
    analyzed = invoke("analyze", run, "--html", page)
    report = _report(run)
    assert analyzed.exit_code == _exit_the_gates_give(report), analyzed.output
    assert "Warning" not in analyzed.stderr
    style = report["style_control"]
    assert style["a_strength_status"] == "extrapolated"
    assert style["a_win_rate_adjusted"] == {"estimate": None, "lo": None, "hi": None}
    assert style["lr_test"] is None
    assert style["lr_test_withheld"] == "extrapolated"
    main = flat("\n".join(style["lines"]))
    assert (
        "A's win rate at equal style: cannot be estimated. A's answer was longer in every one "
        "of the 20 comparisons, so no comparison shows A and B at equal style, and any figure "
        "would extrapolate beyond the data" in main
    )
    assert "log-odds" not in main  # the technical section's
    screen = flat(analyzed.stdout)
    technical = screen[screen.index("Technical figures:") :]
    assert "Estimates are log-odds" in technical
    assert "No test of the style terms: equal style lies outside the data" in technical
    assert "likelihood-ratio test" not in screen
    section = Page(page.read_text()).section("style-control")
    assert "no comparison at equal style" in section
