"""The judging page as a person uses it, in Chromium at a laptop's 1366x768 and a phone's
390x844: a preference judged by keyboard alone with a reason and two extra questions (choosing
never types into the reason box, Y/N answer the questions, Enter submits from anywhere), a
click on a response selects it, the answer bar leaves the responses the screen, tables and
numbers never break inside a word, the sides are named as they stand, and the last
reviewer's end screen is styled and can be reloaded."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_judge_web import odd_positions, wait_for_trial

from blindtest.judging.web.server import hold_open
from blindtest.rundir import artifacts

from judge_runs import make_run, picks_of
from web_page import LAPTOP, PHONE, SIZES, chromium, judge_server, page_at, screenshot

QUESTIONS = ("Is it correct?", "Would it pass review unchanged?")
TABLE = (
    "Measured over a week:\n\n| service | latency | price per 1k |\n|---|---|---|\n"
    "| alpha | 120 ms | $0.11 |\n| beta | 95 ms | $0.125 |\n| gamma | 300 ms | $1.50 |\n\n"
    + "\n\n".join(
        f"Note {i}: the latency figures were measured over 10,000 requests at $0.11 each."
        for i in range(12)
    )
)


def long_texts(trial: int, entry: Any) -> list[str]:
    return [TABLE, "A shorter answer: alpha costs $0.11; latency 120 ms.\n\n" + "More. " * 200]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture(params=sorted(SIZES))
def sized(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[str, Any]]:
    with page_at(browser, request.param) as named:
        yield named


def _focus(page: Any) -> str:
    return str(page.evaluate("document.activeElement.id || document.activeElement.tagName"))


def test_keyboard_only_preference_with_a_reason_and_two_questions(
    tmp_path: Path, sized: tuple[str, Any]
) -> None:
    size, page = sized
    run = make_run(
        tmp_path, "preference", 3, texts=long_texts, require_reason=True, extra_questions=QUESTIONS
    )
    plan = [("l", "r", "yn"), ("r", "t", "ny"), ("t", "l", "yy")]
    with judge_server(run, "--judge-id", "kit") as server:
        page.goto(server.url)
        for n, (first, final, yes_no) in enumerate(plan, start=1):
            wait_for_trial(page, n, 3)
            page.keyboard.press(first)
            page.keyboard.press(final)  # changing one's mind never types into the reason
            assert page.input_value("#reason") == ""
            assert _focus(page) != "reason"
            for key in yes_no:
                page.keyboard.press(key)
            if n == 1:
                screenshot(page, f"judge-keyboard-answered-{size}")
            page.keyboard.press("Tab")  # from the choice to the reason box
            assert _focus(page) == "reason"
            page.keyboard.type(f"like {final} {n}")  # l, r, t, y, n are letters here
            if n == 2:
                page.keyboard.press("Enter")  # Enter in the box submits
                continue
            page.keyboard.press("Escape")  # out of the box: the keys choose again
            assert _focus(page) != "reason"
            if n == 3:
                page.evaluate("document.activeElement.blur()")  # focus nowhere in particular
            page.keyboard.press("Enter")  # submits from anywhere on the page
        page.wait_for_selector("#message")
        code, _, err = server.finish()
    assert code == 0, err
    picks = picks_of(run / artifacts.PICKS)
    words = {"l": "left", "r": "right", "t": "tie"}
    assert [p["pick"] for p in picks] == [words[final] for _, final, _ in plan]
    assert [p["reason"] for p in picks] == [f"like {final} {n}" for n, (_, final, _) in
                                            enumerate(plan, start=1)]  # fmt: skip
    assert [p["answers"] for p in picks] == [
        {QUESTIONS[0]: yn[0] == "y", QUESTIONS[1]: yn[1] == "y"} for _, _, yn in plan
    ]


def test_clicking_a_response_selects_it(tmp_path: Path, sized: tuple[str, Any]) -> None:
    _, page = sized
    run = make_run(tmp_path, "preference", 1, require_reason=False)
    with judge_server(run, "--judge-id", "lou") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 1)
        page.click("#option-2 .text")
        assert page.is_checked("input[name='pick'][value='right']")
        assert "chosen" in (page.get_attribute("#option-2", "class") or "")
        page.click("#option-1 .text")
        assert page.is_checked("input[name='pick'][value='left']")
        page.keyboard.press("Enter")
        page.wait_for_selector("#message")
        code, _, err = server.finish()
    assert code == 0, err
    assert [p["pick"] for p in picks_of(run / artifacts.PICKS)] == ["left"]


def test_clicking_a_triangle_response_selects_it_and_enter_records_it(
    tmp_path: Path, browser: Any
) -> None:
    run = make_run(tmp_path, trials=2)
    odd = odd_positions(run)
    page = browser.new_page(viewport=LAPTOP)
    with judge_server(run, "--judge-id", "max") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 2)
        page.click(f"#option-{odd[0]} .text")  # selects; nothing is recorded yet
        assert "chosen" in (page.get_attribute(f"#option-{odd[0]}", "class") or "")
        assert page.inner_text("#progress") == "trial 1 of 2"
        page.keyboard.press("Enter")
        wait_for_trial(page, 2, 2)
        page.click(f"#option-{odd[1]} .text")
        page.keyboard.press("Enter")
        page.wait_for_selector("#message")
        code, _, err = server.finish()
    page.close()
    assert code == 0, err
    assert [p["pick"] for p in picks_of(run / artifacts.PICKS)] == odd


def test_the_answer_bar_leaves_the_responses_the_screen(tmp_path: Path, browser: Any) -> None:
    """At 1366x768 with a reason and two questions the bar took 360 px and left 139 px of
    each response; now the responses get most of the window."""
    run = make_run(
        tmp_path, "preference", 2, texts=long_texts, require_reason=True, extra_questions=QUESTIONS
    )
    page = browser.new_page(viewport=LAPTOP)
    with judge_server(run, "--judge-id", "ned") as server:
        page.goto(server.url)
        for n in (1, 2):  # the first trial also shows "How to judge"
            wait_for_trial(page, n, 2)
            bar = page.locator("#answer").bounding_box()
            shown = page.evaluate(
                "[1, 2].map(i => { const r = document.getElementById('option-' + i)"
                ".getBoundingClientRect(); return Math.min(r.bottom, innerHeight) - r.top; })"
            )
            assert bar["height"] <= 160, bar
            assert bar["y"] + bar["height"] <= LAPTOP["height"] + 1  # on screen, no scrolling
            assert min(shown) >= 360, shown
            screenshot(page, f"judge-answer-bar-trial-{n}-laptop")
            page.keyboard.press("l")
            page.keyboard.press("y")
            page.keyboard.press("y")
            page.keyboard.press("Tab")
            page.keyboard.type("why")
            page.keyboard.press("Enter")
        page.wait_for_selector("#message")
        server.finish()
    page.close()


def test_on_a_phone_words_never_break_and_the_sides_are_named_as_they_stand(
    tmp_path: Path, browser: Any
) -> None:
    run = make_run(
        tmp_path, "preference", 1, texts=long_texts, extra_questions_per_option=QUESTIONS
    )
    page = browser.new_page(viewport=PHONE)
    with judge_server(run, "--judge-id", "ola") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 1)
        page.locator("#option-1 table").scroll_into_view_if_needed()
        screenshot(page, "judge-phone-table")
        broken = page.evaluate(
            """() => {
              const found = [];
              for (const box of document.querySelectorAll('.option .text')) {
                const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
                for (let node = walk.nextNode(); node; node = walk.nextNode()) {
                  for (const m of node.textContent.matchAll(/\\S+/g)) {
                    const range = document.createRange();
                    range.setStart(node, m.index);
                    range.setEnd(node, m.index + m[0].length);
                    if (range.getClientRects().length > 1) found.push(m[0]);
                  }
                }
              }
              return found;
            }"""
        )
        assert broken == []  # "latency", "$0.11", "10,000" each on one line
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        heads = [page.inner_text(f"#option-{i} h2") for i in (1, 2)]
        assert heads == ["Top (L)", "Bottom (R)"]
        choices = page.inner_text("#choices")
        assert "top" in choices
        assert "bottom" in choices
        assert "left" not in choices.lower()
        legends = page.locator(".option-answer legend").all_inner_texts()
        assert legends == ["Top", "Bottom", "Top", "Bottom"]
        wide = page.context.browser.new_page(viewport=LAPTOP)
        wide.goto(server.url)
        wait_for_trial(wide, 1, 1)
        assert [wide.inner_text(f"#option-{i} h2") for i in (1, 2)] == ["Left (L)", "Right (R)"]
        wide.close()
        server.interrupt()
    page.close()


def test_the_last_reviewers_end_screen_is_styled_and_reloads(
    tmp_path: Path, sized: tuple[str, Any]
) -> None:
    size, page = sized
    run = make_run(tmp_path, trials=2)
    odd = odd_positions(run)
    with judge_server(run, "--judge-id", "pam") as server:
        page.goto(server.url)
        for n in (1, 2):
            wait_for_trial(page, n, 2)
            page.keyboard.press(str(odd[n - 1]))
        for attempt in ("after the last pick", "after a reload"):
            page.wait_for_selector("#message")
            assert "All 2 trials judged" in page.inner_text("#message"), attempt
            styled = page.evaluate(
                "[getComputedStyle(document.body).fontFamily,"
                " getComputedStyle(document.getElementById('message')).maxWidth]"
            )
            assert "system-ui" in styled[0], attempt  # page.css was served and applied
            assert styled[1] == "640px", attempt
            screenshot(page, f"judge-end-screen-{size}")
            page.reload()
        page.wait_for_selector("#message")
        assert server.proc.poll() is None  # still serving the end screen
        server.close_page()  # Enter on bt-judge's terminal
        code, out, err = server.finish()
    assert code == 0, err
    assert "The page shows its end screen: press Enter here to close it." in out
    assert "All 2 trials judged" in out


def _seen(asked: bool, served: bool) -> Any:
    seen = threading.Event()
    if served:
        seen.set()
    return SimpleNamespace(asked=asked, end_served=seen)


def test_after_the_last_pick_enter_closes_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    said: list[str] = []
    monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
    hold_open([_seen(asked=True, served=False)], said.append)  # Enter: closed at once
    assert said == [
        "All picks are saved. The page shows its end screen: press Enter here to close it."
    ]


def test_with_stdin_closed_the_page_closes_once_the_end_screen_is_served(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    said: list[str] = []
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    waiting = _seen(asked=True, served=False)
    threading.Timer(0.3, waiting.end_served.set).start()  # the browser fetches page.css
    hold_open([waiting, _seen(asked=False, served=False)], said.append)
    assert waiting.end_served.is_set()
    assert said == []  # nobody can press Enter: nothing asks them to
