"""A count printed to a person agrees with its noun: "1 trial", "2 trials", never "1 files" or
"1 comparisons", on the screens, in the HTML report and in the judge's closing words."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from blindtest.reportfmt import count
from blindtest.simulator import Simulator
from blindtest.transport.batch import Triage

from conftest import Invoke
from screen_text import flat

#: Plural nouns the stages count; "of N trials" is left alone ("1 of 1 trials" reads as a share).
PLURALS = (
    "files", "comparisons", "trials", "judges", "passes", "requests", "answers", "reviewers",
    "rows", "responses", "prompts", "picks", "tokens", "retries", "slots", "results", "tags",
    "words", "options", "bullets",
)  # fmt: skip
ONE_WITH_A_PLURAL = re.compile(
    r"(?<!of )(?<![\d.,])\b1 (?:[a-z]+ )?(?:" + "|".join(PLURALS) + r")\b"
)


def _page_text(path: Path) -> str:
    page = path.read_text(encoding="utf-8")
    page = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S)
    return flat(html.unescape(re.sub(r"<[^>]+>", " ", page)))


def test_count_names_one_in_the_singular_and_the_rest_in_the_plural() -> None:
    assert count(1, "trial") == "1 trial"
    assert count(2, "trial") == "2 trials"
    assert count(0, "comparison") == "0 comparisons"
    assert count(1, "retry", "retries") == "1 retry"
    assert count(3, "retry", "retries") == "3 retries"


def test_skipped_results_are_counted_in_the_singular_when_there_is_one() -> None:
    assert Triage(same=1).summary("result") == "1 result already imported, skipped"
    assert Triage(same=4).summary("result") == "4 results already imported, skipped"
    assert Triage(same=1).summary() == "1 already imported, skipped"


@pytest.mark.parametrize("trials", [1, 2])
def test_a_run_of_one_trial_speaks_in_the_singular_and_of_two_in_the_plural(
    invoke: Invoke, tmp_path: Path, simulator: Simulator, trials: int
) -> None:
    run = tmp_path / "run"
    page = tmp_path / "report.html"
    url = simulator.base_url
    result = invoke(
        "run", "sim-large", "sim-small", "--demo", "--protocol", "preference",
        "--trials", str(trials), "--a-url", url, "--b-url", url,
        "--judge", "llm:sim-judge-fair", "--judge-url", url, "--run-dir", run, "--seed", "nouns",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    analyzed = invoke("analyze", run, "--html", page)
    assert analyzed.exit_code == 0, analyzed.stderr
    screen = flat(result.stderr + " " + result.stdout)
    shown = _page_text(page)
    for text in (screen, flat(analyzed.stdout), shown):
        assert ONE_WITH_A_PLURAL.findall(text) == []
    trial = "1 trial" if trials == 1 else f"{trials} trials"
    judged = "(1 comparison judged)" if trials == 1 else f"({trials} comparisons judged)"
    blinded = "1 blinded trial;" if trials == 1 else f"{trials} blinded trials;"
    assert f"preference design: {trial} from" in screen
    assert f"trials.jsonl: {blinded}" in screen
    # The preference header counts comparisons and the prompts they are on, for any k.
    compared = (
        "1 comparison on 1 prompt" if trials == 1 else f"{trials} comparisons on {trials} prompts"
    )
    assert f"B (sim-small), {compared}, judged by" in screen
    assert f"LLM judge sim-judge-fair {judged}" in screen
    assert f"· {compared} ·" in shown
    assert f"LLM judge sim-judge-fair {judged}" in shown
    # Each comparison is asked in both orders: 2 requests for one trial, 4 for two.
    assert f"{2 * trials} requests (0 retries)" in screen
