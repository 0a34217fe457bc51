"""(judge diagnostics "in the report") and(the HTML report):
``bt-analyze RUN --html FILE`` carries every section of the result screen, built from
report.json's fields, in the screen's order of importance: verdict, how sure, how big, hidden
controls, position and agreement, the LLM judges with their warnings, the style check
(secondary), what a bot can explain, machine vs person, answers to --ask, identity stripping,
channels, the next step, technical figures, cost, the trials revealed, the sides and notes.

End to end against the simulator's judges, read with the stdlib's html.parser; one test
opens the pages in Chromium (offline, a phone's width, print)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import orjson
import pytest

from blindtest.present.hints import stage_command
from blindtest.present.page import render_report_page
from blindtest.simulator import Simulator

from judge_runs import answer_key, write_picks
from llm_runs import llm, make_run
from screen_text import paragraphs
from web_page import chromium, screenshot

QUESTION = "Is it correct?"


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BLINDTEST_JUDGE_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


class Page(HTMLParser):
    """The page's text by section id, the order of the sections, and the text of the marked
    warnings (class ``warn``) and failures (class ``fail``)."""

    MARKS = ("warn", "fail", "loud")

    def __init__(self, html: str) -> None:
        super().__init__()
        self.sections: dict[str, list[str]] = {}
        self.order: list[str] = []
        self.marked: dict[str, list[str]] = {m: [] for m in self.MARKS}
        self.tags: list[str] = []
        self._open: list[tuple[str, str | None, str | None]] = []  # tag, section, mark
        self._text: list[str] = []
        self.feed(html)
        self.text = _squash(" ".join(self._text))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag in ("br", "meta", "line", "circle", "rect", "path", "polyline", "input"):
            return
        found = dict(attrs)
        section = None
        if tag in ("section", "header", "footer") and found.get("id"):
            section = str(found["id"])
            self.order.append(section)
            self.sections[section] = []
        classes = (found.get("class") or "").split()
        mark = next((m for m in self.MARKS if m in classes), None)
        if mark:
            self.marked[mark].append("")
        self._open.append((tag, section, mark))

    def handle_endtag(self, tag: str) -> None:
        if all(t != tag for t, _, _ in self._open):
            return  # an empty element (<rect/>, <br>) or a stray end tag
        while self._open.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        self._text.append(data)
        for _, section, _ in self._open:
            if section:
                self.sections[section].append(data)
        marks = [m for _, _, m in self._open if m]
        if marks:
            self.marked[marks[-1]][-1] += data

    def section(self, name: str) -> str:
        assert name in self.sections, f"no section {name!r}: {self.order}"
        return _squash(" ".join(self.sections[name]))

    def warnings(self) -> list[str]:
        return [_squash(w) for w in self.marked["warn"]]


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _judged(invoke: Any, url: str, run: Path, model: str, *extra: Any) -> Path:
    out = run / f"picks-{model}.jsonl"
    judged = llm(invoke, run, model, "--out", out, *extra, url=url)
    assert judged.exit_code == 0, judged.output
    return out


def _page(invoke: Any, run: Path, *args: Any) -> tuple[Page, dict[str, Any], str]:
    html = run.parent / f"{run.name}.html"
    analyzed = invoke("analyze", run, *args, "--html", html, "--force")
    assert analyzed.exit_code in (0, 1), analyzed.output
    report = orjson.loads((run / "report.json").read_bytes())
    return Page(html.read_text()), report, analyzed.stdout


@pytest.fixture
def first_judge_run(invoke: Any, simulator: Simulator, tmp_path: Path) -> Path:
    """What the lead saw: a preference run with 4 hidden controls and an --ask question,
    judged by an LLM judge that always picks the first output, audited, analysed."""
    run = tmp_path / "first"
    made = invoke(
        "design", run, "--demo", "--protocol", "preference", "--trials", 20, "--controls", 4,
        "--ask", QUESTION, "--a", "sim-large", "--b", "sim-small", "--a-url", simulator.base_url,
        "--b-url", simulator.base_url, "--seed", "page",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    generated = invoke("generate", run, "--quiet")
    assert generated.exit_code == 0, generated.output
    out = _judged(invoke, simulator.base_url, run, "sim-judge-first", "--price", "1,2")
    (run / "picks.jsonl").write_bytes(out.read_bytes())
    out.unlink()
    assert invoke("audit", run).exit_code == 0
    return run


def test_report_page_of_an_always_first_judge_carries_every_section(
    invoke: Any, first_judge_run: Path
) -> None:
    page, report, screen = _page(invoke, first_judge_run)
    # The sections, in the screen's order of importance (a run that failed a gate has no
    # next step and no technical figures).
    expected = [
        "verdict-block", "estimates", "controls", "position", "llm-judges", "bots", "answers",
        "identity", "channels", "cost", "trials", "sides", "notes",
    ]  # fmt: skip
    assert [s for s in page.order if s in expected] == expected
    assert "next" not in page.order
    assert "technical" not in page.order
    # Verdict: the judge answered by position, so the run is not a result (the swap made every
    # comparison a tie, which would otherwise read as a null), said once, marked failed.
    top = page.section("verdict-block")
    assert report["summary"]["verdict"] in top
    assert top.count("Not a result: position bias: the LLM judge 'sim-judge-first'") == 1
    assert "win rate ?" not in page.text
    assert "How sure" not in top
    assert f"FAILED: {_squash(report['gates_failed'][0])}" in page.marked["fail"]
    # The LLM judge: what it chose against chance, the swap, counts, and its three warnings.
    (found,) = report["llm_judges"]["judges"]
    judge = page.section("llm-judges")
    assert "LLM judge sim-judge-first (20 comparisons judged)" in judge
    assert (
        "position: 20 of 20 comparisons position-inconsistent; both passes named the output "
        "shown first in 20, the one shown second in 0 100% first 83% to 100% 50% p = 0.000002"
    ) in judge
    assert "chose the longer output" in judge
    assert "chose the output with more markdown" in judge
    assert (
        "position swap: both passes agreed in 0% of 20 comparisons (exact 95% interval 0% to 17%)"
        in judge
    )
    assert "below --min-confidence 0 (counted as ties, flagged for human review)" in judge
    assert f"requests {found['requests']:,} ({found['retries']} retries)" in judge
    assert f"tokens {found['tokens']:,}" in judge  # grouped: 12,345
    assert f"cost ${found['cost']:.4f}" in judge
    assert (
        "hidden controls (one model on both sides, 4 comparisons): first position in 100% of 4"
        in (judge)
    )
    # Its position gate failed (the run's failed gate, above), so position is no warning here.
    assert (
        "position gate over 24 comparisons (every pass as shown; margin 5 points): fails "
        "left share 100.0%"
    ) in judge
    warned = page.warnings()
    assert len(found["warnings"]) == 2
    for warning in found["warnings"]:
        assert f"WARNING: {_squash(warning)}" in warned
    assert any("same family (sim)" in w for w in warned)
    assert any("same endpoint" in w for w in warned)
    # Hidden controls, by comparison (the two passes of a swap are one): the first position
    # took all 4, an exact sign test p = 2/16; no control was a preference (the passes
    # disagreed); its tie rate 0% and every untied pick on the left, described.
    controls = page.section("controls")
    assert "4 / 0" in controls
    assert "p = 0.13" in controls
    assert "tie rate (95% interval)" in controls
    assert "too few to test" not in controls
    assert _squash(report["controls"]["judges"][0]["statement"]) in controls
    # One judge: agreement not measured.
    assert "Agreement not measured (one judge)." in page.section("position")
    # What a bot can explain: the score, the sentences and the census.
    bots = page.section("bots")
    length = report["audit"]["bots"]["length"]
    assert f"A's answer was the longer in {length['correct']} of {length['n']} trials" in bots
    for sentence in report["audit"]["sentences"]:
        assert _squash(sentence) in bots
    assert "Census of the responses as shown" in bots
    # Answers, identity stripping, channels, next step (the command as text), technical figures.
    assert _squash(report["answers"][0]["statement"]) in page.section("answers")
    identity = page.section("identity")
    assert "Closed: model names and self-identification (identity stripping)." in identity
    assert "side mentions replaced responses touched A 0 0 B 0 0" in identity
    for channel in (*report["channels_open"], *report["channels_closed"]):
        assert channel in page.section("channels")
    assert report["next"] is None
    # Cost: the appendix with latency, and the judge's tokens and cost.
    cost = page.section("cost")
    assert "mean latency" in cost
    assert (
        f"sim-judge-first {found['requests']:,} 0 0 {found['tokens']:,} ${found['cost']:.4f}"
        in cost
    )
    # Sides and notes, as the screen ends.
    assert report["sides"]["A"]["base_url"] in page.section("sides")
    for note in report["notes"]:
        assert _squash(note) in page.section("notes")
    assert "Read: design.json; picks.jsonl (24 picks)" in page.section("notes")
    # Every warning the screen prints is on the page, marked.
    for line in paragraphs(screen):  # a warning wrapped on the screen is one line here
        if "WARNING: " in line:
            assert _squash(line.strip()) in warned


def test_report_page_lists_leaking_and_unsure_judges_and_the_failed_gate(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "two", "preference", trials=20)
    leaky = _judged(invoke, simulator.base_url, run, "sim-judge-leaky")
    unsure = _judged(invoke, simulator.base_url, run, "sim-judge-unsure")
    page, report, _ = _page(invoke, run, "--picks", leaky, "--picks", unsure)
    judges = {j["judge"]: j for j in report["llm_judges"]["judges"]}
    section = page.section("llm-judges")
    assert "LLM judge sim-judge-leaky (20 comparisons judged)" in section
    assert "LLM judge sim-judge-unsure (20 comparisons judged)" in section
    leaks = judges["sim-judge-leaky"]["leakage"]
    assert leaks
    assert f"with identity leakage {len(leaks)}" in section
    assert f"excluded from the test (neither counted nor ties) {len(leaks)}" in section
    for leak in leaks:  # every one listed (the screen shows five)
        assert f"{leak['trial']} {leak['details']}" in section
    assert "below --min-confidence 20 (counted as ties, flagged for human review)" in section
    # Two judges: agreement measured; an alpha below --min-kappa fails the result, marked.
    position = page.section("position")
    alpha = report["agreement"]["alpha"]
    assert f"Krippendorff's alpha {alpha['statistic']:.2f}" in position
    assert "bootstrap interval over trials" in position
    failed = [_squash(f) for f in page.marked["fail"]]
    for gate in report["gates_failed"]:
        assert f"FAILED: {_squash(gate)}" in failed
    # Every warning of report.json's one list is marked where its section says it.
    marked = [*failed, *page.warnings()]
    for warning in report["warnings"]:
        assert any(_squash(warning["message"]) in shown for shown in marked), warning
    assert "Not audited (run bt-audit, then bt-analyze again)." in page.section("bots")
    assert "Not available for this report: audit.json." in page.section("notes")


def test_report_page_of_a_malformed_judge_left_unfinished_reveals_nothing(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = make_run(invoke, simulator.base_url, tmp_path / "bad", "preference", trials=12)
    out = run / "picks-bad.jsonl"
    judged = llm(invoke, run, "sim-judge-malformed", "--out", out, url=simulator.base_url)
    assert judged.exit_code == 3
    page, report, _ = _page(invoke, run, "--picks", out)
    if report["verdict"] != "void":  # every comparison got through on a retry
        assert "llm-judges" in page.order
        return
    # Void: the page says so first and shows nothing about the picks, like the screen.
    assert page.section("verdict-block").startswith("blindtest report")
    assert _squash(report["statement"]) in page.section("verdict-block")
    for hidden in ("llm-judges", "bots", "trials", "technical", "estimates", "position"):
        assert hidden not in page.order
    assert "Read: design.json; picks-bad.jsonl" in page.section("notes")


def _person_triangle(invoke: Any, simulator: Simulator, tmp_path: Path) -> tuple[Path, Path]:
    """A triangle run judged by a person (right but every fourth trial) and, for --against,
    by an LLM judge."""
    run = make_run(invoke, simulator.base_url, tmp_path / "tri", "triangle", trials=20)
    lines = [
        {
            "trial": e["trial"],
            "judge": "amy",
            "judge_kind": "human",
            "pick": e["odd_position"] if e["trial"] % 4 else e["odd_position"] % 3 + 1,
        }
        for e in answer_key(run)
    ]
    write_picks(run / "picks.jsonl", lines)
    machine = _judged(invoke, simulator.base_url, run, "sim-judge-fair")
    assert invoke("audit", run).exit_code == 0
    return run, machine


def test_report_page_shows_machine_vs_person_for_a_triangle_run(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run, machine = _person_triangle(invoke, simulator, tmp_path)
    page, report, _ = _page(invoke, run, "--against", machine)
    (pair,) = report["machine_vs_person"]["pairs"]
    section = page.section("machine-vs-person")
    kappa = pair["kappa"]
    assert (
        f"sim-judge-fair amy {pair['n']} {pair['agreed']} of {pair['n']} "
        f"{kappa['estimate']:.2f} (95% interval {kappa['lo']:.2f} to {kappa['hi']:.2f})"
    ) in section
    assert "15 of 20 correct" in page.section("verdict-block")
    technical = page.section("technical")
    assert "trials 15 of 20 correct" in technical
    assert "proportion correct 75%" in technical
    assert "pd, visible on" in technical
    assert "d' (secondary)" in technical
    bots = page.section("bots")
    assert "duplicate spotter" in bots
    assert "same pick as the judge" in bots
    for sentence in report["audit"]["sentences"]:
        assert _squash(sentence) in bots
    assert "llm-judges" not in page.order  # the --against judge is compared, not analysed


def test_report_page_answers_to_ask_questions_from_a_person(
    invoke: Any, simulator: Simulator, tmp_path: Path
) -> None:
    run = tmp_path / "ask"
    made = invoke(
        "design", run, "--demo", "--protocol", "preference", "--trials", 12, "--ask", QUESTION,
        "--a", "sim-large", "--b", "sim-small", "--a-url", simulator.base_url, "--b-url",
        simulator.base_url, "--seed", "ask",
    )  # fmt: skip
    assert made.exit_code == 0, made.output
    assert invoke("generate", run, "--quiet").exit_code == 0
    lines = [
        {
            "trial": e["trial"],
            "judge": "amy",
            "judge_kind": "human",
            "pick": "left" if e["left"] == "A" else "right",
            "answers": {QUESTION: e["trial"] % 3 != 0},
        }
        for e in answer_key(run)
    ]
    write_picks(run / "picks.jsonl", lines)
    page, report, _ = _page(invoke, run)
    (answer,) = report["answers"]
    assert "asked once per comparison" in answer["statement"]
    assert _squash(answer["statement"]) in page.section("answers")
    assert "A (sim-large) preferred" in page.section("verdict-block")


def test_report_page_strings_from_the_report_stay_text(invoke: Any, first_judge_run: Path) -> None:
    invoke("analyze", first_judge_run, "--force")
    report = orjson.loads((first_judge_run / "report.json").read_bytes())
    payload = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    judge = report["llm_judges"]["judges"][0]
    judge["warnings"].append(payload)
    judge["leakage"].append({"trial": 3, "details": payload})
    report["next"] = {"why": payload, "stage": "plan", "args": []}
    report["style_control"] = {"fitted": False, "n": 6, "lines": [payload]}
    html = render_report_page(report)
    assert "<script" not in html
    assert "<img" not in html
    assert html.count("&lt;script&gt;") >= 4
    page = Page(html)
    assert f"WARNING: {payload}" in page.warnings()
    assert payload in page.section("next")  # the next step, as text, with its command
    assert stage_command("plan") in page.section("next")


def test_report_page_marks_loud_notes_skipped_inputs_checks_and_disclosures(
    invoke: Any, first_judge_run: Path
) -> None:
    invoke("analyze", first_judge_run, "--force")
    report = orjson.loads((first_judge_run / "report.json").read_bytes())
    report["notes"] = ["REVEALED: the judge saw the reveal before judging.", *report["notes"]]
    report["reading"]["skipped"] = ["picks-old.jsonl: made against another design"]
    report["audit"]["checks"] = {
        "prompts": 20,
        "pass": {"A": {"passed": 15, "total": 20}, "B": {"passed": 11, "total": 20}},
        "paired": {"p_value": 0.125},
        "not_run": 0,
    }
    report["responses"]["identity_stripped"] = {
        "mentions": {"A": 3, "B": 1},
        "responses": {"A": 2, "B": 1},
    }
    disclosure = (
        "Identity stripping replaced 4 mentions in 3 responses (side A: 3 mentions in 2, side B: "
        "1 mention in 1): where a model named itself, its family or its maker, the judge saw the "
        "token instead."
    )
    refusals = "Refusals and truncations, of the responses shown: A 1 refusal and 0 cut."
    report["responses_sentences"] = [refusals, disclosure]
    page = Page(render_report_page(report))
    assert page.marked["loud"] == ["REVEALED: the judge saw the reveal before judging."]
    assert page.order.index("verdict-block") == 0
    assert "Skipped: picks-old.jsonl: made against another design." in page.warnings()
    top = page.section("verdict-block")
    assert "Mechanical checks first (20 prompts): A passed 15/20, B 11/20" in top
    assert top.index("Mechanical checks") < top.index(report["summary"]["verdict"])
    identity = page.section("identity")
    assert disclosure in identity
    assert "A 3 2 B 1 1" in identity
    assert refusals in page.section("bots")
    assert disclosure not in page.section("bots")  # said once, in its own section


def _open_offline(browser: Any, path: Path, width: int) -> Any:
    context = browser.new_context(viewport={"width": width, "height": 900}, offline=True)
    page = context.new_page()
    fetched: list[str] = []
    page.on("request", lambda r: fetched.append(r.url))
    page.goto(path.as_uri())
    page.fetched = fetched
    return page


def test_report_page_in_chromium_shows_the_llm_judge_warnings_on_a_phone_and_in_print(
    invoke: Any, simulator: Simulator, first_judge_run: Path, tmp_path: Path
) -> None:
    html = tmp_path / "first.html"
    assert invoke("analyze", first_judge_run, "--html", html, "--force").exit_code == 1
    # A triangle run with a person's picks, for the eye (made before the browser starts: the
    # stages run their own event loop, Playwright's sync API holds one while it runs).
    run, machine = _person_triangle(invoke, simulator, tmp_path)
    tri = tmp_path / "tri.html"
    assert invoke("analyze", run, "--against", machine, "--html", tri).exit_code == 0
    with chromium() as browser:
        page = _open_offline(browser, html, 1100)
        screenshot(page, "report-llm-judge-controls-wide")
        assert page.fetched == [html.as_uri()]
        warnings = page.locator("#llm-judges .warn")
        assert warnings.count() == 2
        assert warnings.first.is_visible()
        assert "same family" in warnings.first.inner_text()
        # Marked: a coloured bar, not only words.
        border = warnings.first.evaluate("e => getComputedStyle(e).borderLeftWidth")
        assert border != "0px"
        assert "position bias" in page.inner_text("#verdict")
        assert page.locator("#next").count() == 0
        narrow = _open_offline(browser, html, 390)
        screenshot(narrow, "report-llm-judge-controls-narrow")
        assert narrow.evaluate("document.documentElement.scrollWidth") <= 390
        page.emulate_media(media="print")
        assert page.locator("#llm-judges .warn").first.is_visible()
        assert page.locator("#chart-pc svg").is_visible()
        person = _open_offline(browser, tri, 1100)
        screenshot(person, "report-triangle-person-wide")
        assert person.locator("#machine-vs-person table").is_visible()
        assert person.fetched == [tri.as_uri()]
