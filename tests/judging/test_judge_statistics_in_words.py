"""The judge statistics a report holds are said on the result screen, at 80 columns, and on
the HTML page: what each number is, its unit (comparisons), its interval and, where it calls
for something, what to do. An LLM judge's length and markdown shares carry their exact test,
a share over no comparison is said to be unmeasured, a judge whose verdicts follow length is
warned with what to do; each tag's win rate carries its Wilson interval and the tags that go
the other way are said on the page as on the screen.

Reference values: exact enumeration (Fractions) and Wilson's textbook formula; the warning's
size under a judge that ignores length by exact summation over the binomial."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from html.parser import HTMLParser
from math import comb
from pathlib import Path
from typing import Any

import orjson
import pytest
from scipy import stats
from test_llm_judge_position_units import _swapped, _two_sided

from blindtest.analysis.llm_diagnostics import POSITION_MARGIN, Share, _direction_warning, diagnose
from blindtest.model.rng import IndexStream
from blindtest.present.render import agreement_text
from blindtest.reportfmt import format_p
from blindtest.rundir import artifacts
from blindtest.simulator import SimulatorConfig, running
from blindtest.stats import krippendorff_alpha

from report_runs import (
    cli,
    load,
    make_design,
    numbered_prompts,
    preference_picks,
    write_design_run,
    write_picks,
)
from screen_text import flat, paragraphs

LONG = "a much longer answer with\n- a bullet\n- **bold**"


class Page(HTMLParser):
    """The HTML report's text by section id, and the text of its marked warnings."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.sections: dict[str, list[str]] = {}
        self.marked: list[str] = []
        self._open: list[tuple[str, str | None, bool]] = []  # tag, section, a warning
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag in ("br", "meta", "line", "circle", "rect", "path", "polyline", "input"):
            return
        section = str(found["id"]) if tag == "section" and found.get("id") else None
        if section:
            self.sections[section] = []
        warn = "warn" in (found.get("class") or "").split()
        if warn:
            self.marked.append("")
        self._open.append((tag, section, warn))

    def handle_endtag(self, tag: str) -> None:
        if any(t == tag for t, _, _ in self._open):
            while self._open.pop()[0] != tag:
                pass

    def handle_data(self, data: str) -> None:
        for _, section, _ in self._open:
            if section:
                self.sections[section].append(data)
        if any(warn for _, _, warn in self._open):
            self.marked[-1] += data

    def section(self, name: str) -> str:
        return re.sub(r"\s+", " ", " ".join(self.sections[name])).strip()

    def warnings(self) -> list[str]:
        return [re.sub(r"\s+", " ", w).strip() for w in self.marked]


def _longer_judge(n: int, *, longer: bool = True) -> list[dict[str, Any]]:
    """``n`` swapped comparisons whose passes both chose the right output, the longer one
    (or, ``longer=False``, the shorter)."""
    return (
        [r for t in range(1, n + 1) for r in _swapped(t, "B", "A")]
        if longer
        else [r for t in range(1, n + 1) for r in _swapped(t, "A", "B")]
    )


def _options(n: int) -> dict[int, tuple[str, str]]:
    return {t: ("short", LONG) for t in range(1, n + 1)}


# --------------------------------------------------------------------------- the warning


def test_a_judge_that_follows_length_is_warned_with_its_test_and_what_to_do() -> None:
    found = diagnose("j", "preference", _longer_judge(20), [], _options(20), {})
    p = float(_two_sided(20, 20, Fraction(1, 2)))  # 2 / 2^20
    length, markdown = found.warnings
    assert length == (
        "length: its verdicts go with length (the longer output in 20 of 20 comparisons whose "
        f"two passes chose the same output, chance 50%, exact two-sided {format_p(p)}). Either "
        "it rewards length (the judge's prompt says: do not assume that longer outputs are "
        "better) or the "
        "better side also writes more; compare it with a person's picks on a sample of trials "
        "(bt-analyze --against) before trusting its win rate"
    )
    assert markdown.startswith(
        "markdown: its verdicts go with formatting (the output with more markdown in 20 of 20 "
    )
    assert "or the better side also formats more" in markdown


def test_a_judge_that_shuns_length_is_warned_the_other_way() -> None:
    found = diagnose("j", "preference", _longer_judge(12, longer=False), [], _options(12), {})
    length = found.warnings[0]
    assert length.startswith("length: its verdicts go against length (the longer output in 0 of")
    assert "Either it penalises length or the better side also writes less" in length
    assert "do not assume" not in length


@pytest.mark.parametrize(("k", "n"), [(10, 20), (14, 20), (3, 4)])
def test_no_length_warning_where_chance_explains_the_share(k: int, n: int) -> None:
    # 14 of 20: p = 0.115; 3 of 4: p = 0.625; 10 of 20: no lean at all.
    assert _direction_warning(Share(k, n, 0.5), "length", 0.05) is None


@pytest.mark.parametrize("chance", [Fraction(1, 2), Fraction(1, 3)])
def test_a_judge_that_ignores_length_is_warned_at_most_alpha_of_the_time(
    chance: Fraction,
) -> None:
    # The warning's size, exactly: the chance of each count k of n under a judge that ignores
    # length, summed over the counts that warn. At most alpha for every n (the exact test
    # alone is; the 5-point margin only removes counts).
    for n in range(1, 61):
        size = Fraction(0)
        for k in range(n + 1):
            if _direction_warning(Share(k, n, float(chance)), "length", 0.05) is not None:
                size += comb(n, k) * chance**k * (1 - chance) ** (n - k)
                assert abs(k / n - float(chance)) > POSITION_MARGIN
        assert size <= Fraction(5, 100), (n, float(size))


# --------------------------------------------------------------------------- end to end


def _tagged_prompts(path: Path, n: int) -> Path:
    tags = ("code", "writing")
    rows = [{"id": f"q{i:02d}", "prompt": f"Question {i}: explain topic {i}.",
             "tags": [tags[i % 2]]} for i in range(n)]  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def llm_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Page, dict[str, Any]]:
    """A preference run judged by an LLM judge that always picks the longer output and one
    that always picks the first shown; the screen (80 columns, a pipe), page and report."""
    root = tmp_path_factory.mktemp("words")
    run = root / "run"
    judges = ("sim-judge-longer", "sim-judge-first")
    with running(SimulatorConfig()) as sim:
        url = sim.base_url
        steps: list[tuple[Any, ...]] = [
            ("design", run, "--prompts", _tagged_prompts(root / "p.jsonl", 16), "--protocol",
             "preference", "--a", "sim-large", "--b", "sim-small", "--a-url", url, "--b-url",
             url, "--seed", "words", "--trials", 16),
            ("generate", run, "--quiet"),
            *[("judge", run, "--judge", f"llm:{j}", "--judge-url", url, "--out",
               run / f"picks-{j}.jsonl", "--quiet") for j in judges],
        ]  # fmt: skip
        for step in steps:
            done = cli(*step)
            assert done.exit_code == 0, (step, done.output)
    html = root / "report.html"
    picks = [a for j in judges for a in ("--picks", run / f"picks-{j}.jsonl")]
    analyzed = cli("analyze", run, *picks, "--html", html)
    assert analyzed.exit_code == 1, analyzed.output  # the first-position judge fails its gate
    report = orjson.loads((run / artifacts.REPORT).read_bytes())
    return analyzed.stdout, Page(html.read_text()), report


def _judge(report: dict[str, Any], model: str) -> dict[str, Any]:
    return next(j for j in report["llm_judges"]["judges"] if j["model"] == model)


def test_the_screen_says_each_share_with_its_unit_interval_and_exact_test(
    llm_run: tuple[str, Page, dict[str, Any]],
) -> None:
    screen, _, report = llm_run
    text = flat(screen)
    longer = _judge(report, "sim-judge-longer")
    for key, what in (("p_longer", "the longer output"),
                      ("p_more_markdown", "the output with more markdown")):  # fmt: skip
        share = longer[key]
        k, n = share["k"], share["n"]
        p = float(_two_sided(k, n, Fraction(1, 2)))
        exact = stats.binomtest(k, n, 0.5).proportion_ci(0.95, method="exact")
        assert (
            f"chose {what} in {k / n:.0%} of {n} comparisons whose two passes chose the same "
            f"output (exact 95% interval {exact.low:.0%} to {exact.high:.0%}); chance 50%, "
            f"exact two-sided {format_p(p)}"
        ) in text
    assert "WARNING: length: its verdicts go with length" in text
    assert "(bt-analyze --against) before trusting its win rate" in text
    for line in screen.splitlines():
        assert len(line) <= 80 or "  " in line.strip(), line  # prose wraps; tables may not


def test_a_share_over_no_comparison_is_said_to_be_unmeasured(
    llm_run: tuple[str, Page, dict[str, Any]],
) -> None:
    screen, page, report = llm_run
    first = _judge(report, "sim-judge-first")
    assert first["p_longer"]["n"] == 0  # every comparison position-inconsistent
    text = flat(screen)
    assert (
        "chose the longer output: not measured, no comparison counts (only comparisons whose "
        "two passes chose the same output do)"
    ) in text
    assert "n/a" not in text
    section = page.section("llm-judges")
    assert "not measured: no comparison counts" in section
    assert "p not defined" not in section


def test_a_position_split_with_nothing_decided_by_position_says_there_is_no_test(
    llm_run: tuple[str, Page, dict[str, Any]],
) -> None:
    screen, page, report = llm_run
    longer = _judge(report, "sim-judge-longer")["position"]
    assert (longer["first"], longer["second"], longer["p_value"]) == (0, 0, None)
    assert "position decided none of them, so there is no sign test" in flat(screen)
    assert "none decided by position" in page.section("llm-judges")


def test_the_page_marks_the_length_warning(llm_run: tuple[str, Page, dict[str, Any]]) -> None:
    _, page, report = llm_run
    warning = _judge(report, "sim-judge-longer")["warnings"][0]
    assert f"WARNING: {warning}" in page.warnings()


def test_the_position_gate_gives_p_in_the_reports_digits(
    llm_run: tuple[str, Page, dict[str, Any]],
) -> None:
    screen, _, report = llm_run
    p = _judge(report, "sim-judge-first")["position"]["p_value"]
    assert p == pytest.approx(float(_two_sided(16, 16, Fraction(1, 2))), rel=1e-12)
    assert "exact two-sided sign test p = 0.00003" in flat(screen)  # 2 / 2^16, one digit
    assert "e-0" not in screen


# --------------------------------------------------------------------------- by tag


def _wilson(k: int, n: int) -> tuple[float, float]:
    z = stats.norm.ppf(0.975)
    phat = k / n
    centre = (phat + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@pytest.fixture(scope="module")
def tagged(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Page, dict[str, Any]]:
    """A preference run of 30 trials: A wins the 'db' prompts, B the 'ui' ones (the fewer),
    every fourth a tie; two people judge alike."""
    tags = lambda i: ["ui"] if i % 3 == 0 else ["db"]  # noqa: E731
    root = tmp_path_factory.mktemp("tagged")
    design = make_design("preference", 30, prompts=numbered_prompts(30, tags=tags))
    run = write_design_run(root, design)
    design = load(run)
    tag_of = {p["id"]: p["tags"][0] for p in design["prompts"]}
    outcome = {}
    for entry in design["arrangement"]:
        side = "A" if tag_of[entry["prompt_id"]] == "db" else "B"
        outcome[entry["trial"]] = "tie" if entry["trial"] % 4 == 0 else side
    write_picks(run / artifacts.PICKS, preference_picks(design, outcome)
                + preference_picks(design, outcome, judge="bob"))  # fmt: skip
    html = root / "report.html"
    analyzed = cli("analyze", run, "--html", html)
    assert analyzed.exit_code == 0, analyzed.output
    report = orjson.loads((run / artifacts.REPORT).read_bytes())
    return analyzed.stdout, Page(html.read_text()), report


def test_each_tag_line_carries_the_win_rate_with_its_wilson_interval(
    tagged: tuple[str, Page, dict[str, Any]],
) -> None:
    screen, _, report = tagged
    text = flat(screen)
    assert (
        "By task type (trials; A's win rate among the untied, Wilson 95% interval; exact "
        "two-sided p, Holm-adjusted across 2 tags):"
    ) in text
    for tag, found in report["candidates"]["by_tag"].items():
        (row,) = found["pairs"]  # two sides: one pair per tag, A's wins first
        lo, hi = _wilson(row["wins"], row["n"])
        assert (
            f"{tag}: A {row['wins']} : B {row['losses']}, {row['ties']} ties; A's win rate "
            f"{row['wins'] / row['n']:.0%} ({lo:.0%} to {hi:.0%}); {format_p(row['p_holm'])}"
        ) in text


def test_the_page_says_which_tag_goes_the_other_way_as_the_screen_does(
    tagged: tuple[str, Page, dict[str, Any]],
) -> None:
    screen, page, report = tagged
    assert report["candidates"]["by_tag"]["ui"]["pairs"][0]["won_more"] == "B"
    assert report["wins"] > report["losses"]
    said = "On 'ui' B is preferred"
    assert said in flat(screen)
    section = page.section("position")
    assert said in section
    assert "Holm's adjustment across 2 tags" in section
    assert "Holm-adjusted across the 2 tags" in section  # the table's note
    (sentence,) = [flat(s) for s in paragraphs(screen) if s.startswith(said)]
    assert sentence in section


# --------------------------------------------------------------------------- agreement


def test_alphas_interval_says_how_many_resamples_had_one_answer_throughout() -> None:
    # 11 trials, nearly all 'A': a resample of trials that holds no 'B' has no alpha and is
    # left out of the percentile interval; counted here from the same index stream directly.
    units = [["A", "A"]] * 9 + [["A", "B"], ["B", "B"]]
    found = krippendorff_alpha(units, rng=IndexStream("s", "agreement"))
    picks = IndexStream("s", "agreement").take(found.resamples, len(units))
    one_answer = sum(1 for row in picks if all(i < 9 for i in row) or all(i == 10 for i in row))
    assert found.undefined_resamples == one_answer > 0
    shown = {"measurable": True, "alpha": found.to_dict(), "n_items": 11,
             "percent": {"statistic": 0.9}, "pairs": [], "caveat": "c"}  # fmt: skip
    assert (
        f"from the {2000 - one_answer:,} of 2,000 resamples that held more than one answer"
    ) in agreement_text(shown)[0]
    every = krippendorff_alpha([["A", "B"], ["B", "A"], ["A", "A"], ["B", "B"]] * 5,
                               rng=IndexStream("s", "agreement"))  # fmt: skip
    assert every.undefined_resamples == 0
    plain = {**shown, "alpha": every.to_dict()}
    assert "resamples" not in agreement_text(plain)[0]
