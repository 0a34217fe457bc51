"""Extra questions on both judging surfaces: the terminal at 80x24 (a real pty) and the judging
page in Chromium, by keyboard alone. A question asked of each option gets a yes or no for
option 1 (left) and option 2 (right), one asked once per comparison one yes or no; the same
answers give the same pick records on both surfaces.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from blindtest.judging.terminal.layout import display_width
from blindtest.rundir import artifacts

from judge_runs import make_run, picks_of, strip_ansi
from web_page import chromium, judge_server, screenshot, wait_for_keys

ERROR = "Does it contain a factual error?"
REVIEW = "Would either pass review unchanged?"
#: Per trial: the pick (left / right / tie), then yes for option 1, for option 2, for the review.
PLAN = [
    ("left", True, False, True),
    ("right", False, True, False),
    ("tie", True, True, False),
    ("left", False, False, True),
]
TERMINAL_KEYS = {"left": "1", "right": "2", "tie": "t"}
PAGE_KEYS = {"left": "l", "right": "r", "tie": "t"}


def _run(root: Path) -> Path:
    return make_run(
        root,
        "preference",
        len(PLAN),
        extra_questions=(REVIEW,),
        extra_questions_per_option=(ERROR,),
        require_reason=False,
    )


def _expected() -> list[dict[str, Any]]:
    return [
        {
            "trial": n,
            "pick": pick,
            "answers": {ERROR: {"left": left, "right": right}, REVIEW: review},
        }
        for n, (pick, left, right, review) in enumerate(PLAN, start=1)
    ]


def _comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A pick record without what differs between two sittings (the judge and the time) and
    the id the page makes for each pick (so a pick it sends again is recorded once)."""
    return [{k: v for k, v in r.items() if k not in ("judge", "at", "pick_id")} for r in records]


def _yn(yes: bool) -> str:
    return "y" if yes else "n"


@pytest.mark.pty
def test_terminal_asks_each_option_then_the_comparison_at_80_columns(tmp_path: Path) -> None:
    run = _run(tmp_path)
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "LC_ALL": "C.UTF-8", "TERM": "xterm"}
    env.pop("BLINDTEST_DEBUG", None)
    log = io.StringIO()
    child = pexpect.spawn(
        sys.executable,
        ["-m", "blindtest", "judge", str(run), "--judge-id", "tess"],
        dimensions=(24, 80),
        encoding="utf-8",
        timeout=None,  # each expect waits for its prompt, however busy the machine
        env=env,
    )
    child.logfile_read = log
    child.expect_exact("Press Enter to start")
    child.send("\r")
    for n, (pick, left, right, review) in enumerate(PLAN, start=1):
        child.expect_exact(f"trial {n} of {len(PLAN)} > ")
        child.send(TERMINAL_KEYS[pick] + "\r")
        child.expect_exact("Reason, one line (Enter to skip): ")
        child.send("\r")
        child.expect_exact(f"{ERROR} (y or n for each option)")
        child.expect_exact("  option 1 [y/n] ")
        if n == 1:  # not an answer: asked again; q asks whether to stop, and "no" goes on
            child.send("maybe\r")
            child.expect_exact("Type y or n.")
            child.expect_exact("  option 1 [y/n] ")
            child.send("q\r")
            child.expect_exact("Stop now? [y/N] ")
            child.send("n\r")
            child.expect_exact("  option 1 [y/n] ")
        child.send(_yn(left) + "\r")
        child.expect_exact("  option 2 [y/n] ")
        child.send(_yn(right) + "\r")
        child.expect_exact(f"{REVIEW} [y/n] ")
        child.send(_yn(review) + "\r")
    child.expect_exact(f"All {len(PLAN)} trials judged.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    records = picks_of(run / artifacts.PICKS)
    assert _comparable(records) == [
        {"schema": "blindtest/picks@1", "judge_kind": "human", "design_sha256": r["design_sha256"]}
        | e
        for r, e in zip(records, _expected(), strict=True)
    ]
    rows = strip_ansi(log.getvalue().replace("\x1b[H\x1b[2J", "\r\n")).replace("\r\n", "\n")
    # Every row up to the closing line fits (that line names a command, which is never cut).
    shown = rows.split(f"All {len(PLAN)} trials judged.")[0].split("\n")
    assert max(display_width(row) for row in shown) <= 79, max(shown, key=display_width)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def _press_yes_no(page: Any, yes: bool) -> None:
    """Y or N answers the first question still unanswered (the page marks it)."""
    page.keyboard.press("y" if yes else "n")


def test_page_asks_each_option_by_keyboard_and_records_what_the_terminal_does(
    tmp_path: Path, browser: Any
) -> None:
    run = _run(tmp_path)
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    with judge_server(run, "--judge-id", "wendy") as server:
        page.goto(server.url)
        for n, (pick, left, right, review) in enumerate(PLAN, start=1):
            page.wait_for_function(
                "t => document.getElementById('progress') && "
                "document.getElementById('progress').textContent === t",
                arg=f"trial {n} of {len(PLAN)}",
            )
            wait_for_keys(page)
            if n == 1:
                legend = page.locator("fieldset.each > legend").inner_text()
                assert legend == f"{ERROR} (for each response)"
                assert page.locator("fieldset.option-answer > legend").all_inner_texts() == [
                    "Left",
                    "Right",
                ]
                # Sent with an option unanswered: refused with the question named, kept.
                page.keyboard.press(PAGE_KEYS[pick])
                _press_yes_no(page, left)
                page.evaluate("document.getElementById('answer').noValidate = true")
                page.locator("#submit").click()
                page.wait_for_selector("#error")
                assert page.inner_text("#error") == (
                    f"Answer yes or no for the left and the right: {ERROR}"
                )
                wait_for_keys(page)
                checked = page.locator("input[name='e1-left']:checked").get_attribute("value")
                assert checked == ("yes" if left else "no")  # what was chosen is kept
                _press_yes_no(page, right)  # the left pair is answered: Y/N go on to the right
                _press_yes_no(page, review)
                screenshot(page, "judge-extra-questions")
                page.keyboard.press("Enter")
                continue
            page.keyboard.press(PAGE_KEYS[pick])  # never types into the reason box
            for yes in (left, right, review):
                _press_yes_no(page, yes)
            page.keyboard.press("Enter")
        page.wait_for_selector("#message")
        code, _, err = server.finish()
    assert code == 0, err
    records = picks_of(run / artifacts.PICKS)
    # The same records as the terminal's, but for the judge and the time.
    assert _comparable(records) == [
        {"schema": "blindtest/picks@1", "judge_kind": "human", "design_sha256": r["design_sha256"]}
        | e
        for r, e in zip(records, _expected(), strict=True)
    ]
