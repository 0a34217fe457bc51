"""A rater's tools on the judging page, in Chromium at a laptop's 1366x768 and a phone's
390x844: a pick made while bt-judge is away is kept in the page and saved when it is back (and
recorded once), the history of picks with any of them changed, skip and "both bad", an undo
that brings back the reason and the answers, the answer's parts in tab order before Submit, a
missing answer said next to its question, contrast in light and dark mode, a heading, named
regions and a live region, buttons rather than key hints on a touch screen, help one key away,
how many are left, and the favicon request answered."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_judge_web import get, shown, wait_for_trial

from blindtest.rundir import artifacts

from judge_runs import make_run, picks_of
from web_page import SIZES, chromium, judge_server, page_at, screenshot, wait_for_keys

QUESTIONS = ("Is it correct?",)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture(params=sorted(SIZES))
def sized(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[str, Any]]:
    with page_at(browser, request.param) as named:
        dialogs: list[str] = []

        def dismiss(dialog: Any) -> None:
            dialogs.append(dialog.message)
            dialog.dismiss()

        named[1].on("dialog", dismiss)
        named[1].dialogs = dialogs
        yield named


def _preference(tmp_path: Path, trials: int = 4, **options: Any) -> Path:
    """A preference run with one extra question; a reason is optional unless asked for."""
    options.setdefault("require_reason", False)
    return make_run(tmp_path, "preference", trials, extra_questions=QUESTIONS, **options)


def _answer(page: Any, key: str, reason: str = "", yes: bool = True) -> None:
    """Choose by key, give a reason, answer the question, submit with Enter."""
    page.keyboard.press(key)
    if reason:
        page.keyboard.press("Tab")
        page.keyboard.type(reason)
        page.keyboard.press("Escape")
    page.keyboard.press("y" if yes else "n")
    page.keyboard.press("Enter")


def _said(page: Any, words: str) -> None:
    page.wait_for_function(
        "w => (document.getElementById('status') || {}).textContent === w", arg=words
    )


# --------------------------------------------------------------------------- nothing lost


def test_a_pick_made_while_the_server_is_down_survives_its_restart(
    tmp_path: Path, sized: tuple[str, Any]
) -> None:
    size, page = sized
    run = _preference(tmp_path, trials=3)
    with judge_server(run, "--judge-id", "ana") as first:
        page.goto(first.url)
        wait_for_trial(page, 1, 3)
        code, _, _ = first.interrupt()  # bt-judge stopped (Ctrl-C), the page still open
    assert code == 130
    page.keyboard.press("l")
    page.keyboard.press("Tab")
    page.keyboard.type("kept while away")
    page.keyboard.press("Escape")
    page.keyboard.press("y")
    page.keyboard.press("Enter")
    page.wait_for_selector("#status.pending")
    assert "Not saved yet" in page.inner_text("#status")
    screenshot(page, f"judge-not-saved-yet-{size}")
    assert not (run / artifacts.PICKS).exists() or picks_of(run / artifacts.PICKS) == []
    with judge_server(run, "--judge-id", "ana") as second:  # the same link works again
        wait_for_trial(page, 2, 3)  # the page sent the kept pick by itself
        _said(page, "Saved.")
        second.interrupt()
    lines = picks_of(run / artifacts.PICKS)
    assert [(p["trial"], p["pick"], p["reason"]) for p in lines] == [(1, "left", "kept while away")]
    assert lines[0]["answers"] == {QUESTIONS[0]: True}
    assert lines[0]["pick_id"]


def test_a_pick_sent_twice_is_recorded_once(tmp_path: Path) -> None:
    run = _preference(tmp_path, trials=2)
    with judge_server(run, "--judge-id", "ana") as server:
        body = shown(server.url)
        hidden = {"trial": "1", "mark": body.split('name="mark" value="')[1].split('"')[0]}
        fields = {**hidden, "pick": "right", "reason": "r", "q1": "no", "pick_id": "pTwice0001"}
        data = urllib.parse.urlencode(fields).encode()
        assert get(server.url + "pick", data)[0] == 200
        shown(server.url)  # trial 2 is drawn
        again = get(server.url + "pick", data)  # its reply was lost: sent again
        assert again[0] == 200
        assert "trial 2 of 2" in again[1]
        server.interrupt()
    lines = picks_of(run / artifacts.PICKS)
    assert [(p["trial"], p["pick_id"]) for p in lines] == [(1, "pTwice0001")]


# --------------------------------------------------------------------------- history


def test_the_history_lists_the_picks_and_any_can_be_changed(
    tmp_path: Path, sized: tuple[str, Any]
) -> None:
    size, page = sized
    run = _preference(tmp_path, trials=3)
    with judge_server(run, "--judge-id", "bo") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 3)
        _answer(page, "l", "the clearer one")
        wait_for_trial(page, 2, 3)
        _answer(page, "r", yes=False)
        wait_for_trial(page, 3, 3)
        page.keyboard.press("h")
        page.wait_for_selector("#words")
        rows = page.locator("#words tbody tr").all_inner_texts()
        assert len(rows) == 2
        assert "the clearer one" in rows[0]
        assert f"{QUESTIONS[0]} yes" in rows[0]
        text = page.inner_text("#main")
        assert "model" not in text.lower()
        assert " A " not in text  # nothing about sides
        screenshot(page, f"judge-history-{size}")
        page.click("#change-1")
        page.wait_for_selector("#again")
        wait_for_keys(page)
        assert "Changing your pick for trial 1" in page.inner_text("#again")
        assert page.locator("input[name='pick'][value='left']").is_checked()
        assert page.locator("#reason").input_value() == "the clearer one"
        assert page.locator("input[name='q1'][value='yes']").is_checked()
        screenshot(page, f"judge-history-change-{size}")
        page.keyboard.press("t")
        page.locator("#reason").fill("on reflection, the same")
        page.locator("#submit").click()
        wait_for_trial(page, 3, 3)  # back where the rater was
        _said(page, "Change saved.")
        page.keyboard.press("h")
        page.wait_for_selector("#words")
        assert "tie" in page.locator("#word-1").inner_text()
        page.keyboard.press("b")
        wait_for_trial(page, 3, 3)
        _answer(page, "l")
        page.wait_for_selector("#message")
        code, _, err = server.finish()
    assert code == 0, err
    lines = picks_of(run / artifacts.PICKS)
    assert [(p["trial"], p["pick"], p.get("correction", False)) for p in lines] == [
        (1, "left", False), (2, "right", False), (1, "tie", True), (3, "left", False)
    ]  # fmt: skip
    assert lines[2]["reason"] == "on reflection, the same"


def test_a_change_can_be_cancelled_and_keeps_the_pick(tmp_path: Path, browser: Any) -> None:
    run = _preference(tmp_path, trials=2)
    with page_at(browser, "laptop") as (_, page), judge_server(run, "--judge-id", "cy") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 2)
        _answer(page, "r")
        wait_for_trial(page, 2, 2)
        page.goto(server.url + "change/1")
        page.wait_for_selector("#again")
        wait_for_keys(page)
        page.keyboard.press("Escape")
        wait_for_trial(page, 2, 2)
        server.interrupt()
    assert [p["pick"] for p in picks_of(run / artifacts.PICKS)] == ["right"]


# --------------------------------------------------------------------------- skip, both bad


def test_a_skipped_comparison_comes_back_and_both_bad_is_its_own_answer(
    tmp_path: Path, sized: tuple[str, Any]
) -> None:
    size, page = sized
    run = _preference(tmp_path, trials=3)
    with judge_server(run, "--judge-id", "di") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 3)
        page.keyboard.press("s")  # put off
        _said(page, "Skipped: it comes back after the others.")
        for _ in range(2):
            page.wait_for_function("() => document.getElementById('status').textContent !== ''")
            wait_for_keys(page)
            _answer(page, "r")
            _said(page, "Saved.")
        page.wait_for_selector("#skipped-note")
        screenshot(page, f"judge-skipped-back-{size}")
        assert "0 left" not in page.inner_text("#left")
        assert page.inner_text("#left") == "2 judged · 1 left"
        _answer(page, "x")  # both are bad
        page.wait_for_selector("#message")
        code, _, err = server.finish()
    assert code == 0, err
    lines = picks_of(run / artifacts.PICKS)
    assert [(p["trial"], p["pick"], p.get("skipped", False)) for p in lines] == [
        (1, "skipped", True), (2, "right", False), (3, "right", False), (1, "both_bad", False)
    ]  # fmt: skip


def test_an_undo_brings_back_the_reason_and_the_answers(
    tmp_path: Path, sized: tuple[str, Any]
) -> None:
    size, page = sized
    run = _preference(tmp_path, trials=2)
    with judge_server(run, "--judge-id", "ed") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 2)
        _answer(page, "r", "shorter and right", yes=False)
        wait_for_trial(page, 2, 2)
        page.keyboard.press("u")
        page.wait_for_selector("#again")
        wait_for_trial(page, 1, 2)
        _said(page, "Taken back: the comparison is shown again, your answer filled in.")
        assert page.locator("input[name='pick'][value='right']").is_checked()
        assert page.locator("#reason").input_value() == "shorter and right"
        assert page.locator("input[name='q1'][value='no']").is_checked()
        assert page.inner_text("#skip").startswith("Keep the earlier pick")
        screenshot(page, f"judge-undo-filled-in-{size}")
        server.interrupt()


# --------------------------------------------------------------------------- order, access


def _tab_order(page: Any) -> list[str]:
    """The form's controls in the order Tab reaches them from the choice."""
    page.keyboard.press("l")
    seen: list[str] = []
    for _ in range(12):
        page.keyboard.press("Tab")
        where = page.evaluate(
            "(() => { const e = document.activeElement; "
            "return e.id || (e.name ? e.name + '=' + e.value : e.tagName); })()"
        )
        seen.append(where)
        if where == "submit":
            break
    return seen


def test_the_extra_questions_come_before_submit_in_tab_order(
    tmp_path: Path, sized: tuple[str, Any]
) -> None:
    _, page = sized
    run = _preference(tmp_path, trials=1)
    with judge_server(run, "--judge-id", "fa") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 1)
        order = _tab_order(page)
        assert order[0] == "reason"
        assert "q1=yes" in order
        assert order[-1] == "submit"
        assert order.index("q1=yes") < order.index("submit")
        question, submit = page.evaluate(
            "['q1', 'submit'].map(id => document.getElementById(id).getBoundingClientRect())"
            ".map(r => ({top: r.top, bottom: r.bottom, left: r.left}))"
        )
        # On the screen too: the question before Submit (above it, or beside it on its left).
        assert question["top"] < submit["bottom"]
        assert question["bottom"] <= submit["top"] or question["left"] < submit["left"]
        server.interrupt()


def test_a_missing_answer_is_said_next_to_its_question(
    tmp_path: Path, sized: tuple[str, Any]
) -> None:
    size, page = sized
    run = _preference(tmp_path, trials=1, require_reason=True)
    with judge_server(run, "--judge-id", "gu") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 1)
        page.keyboard.press("Enter")
        page.wait_for_selector("#choices #error")
        assert page.inner_text("#error") == "Choose left, right, tie or both bad."
        page.keyboard.press("l")
        page.keyboard.press("Enter")
        page.wait_for_selector("#reason-label + #error, .row > #error")
        assert page.inner_text("#error") == "Give a one-line reason for your choice."
        page.locator("#reason").fill("because")
        page.locator("#reason").press("Enter")
        page.wait_for_selector("#q1 #error")
        assert page.inner_text("#error") == f"Answer yes or no: {QUESTIONS[0]}"
        assert page.locator("#q1").get_attribute("aria-invalid") == "true"
        screenshot(page, f"judge-missing-answer-{size}")
        assert page.dialogs == []
        assert page.evaluate("document.getElementById('answer').noValidate")  # no bubble
        page.keyboard.press("y")
        assert page.locator("#error").count() == 0
        page.keyboard.press("Enter")
        page.wait_for_selector("#message")
        code, _, err = server.finish()
    assert code == 0, err


CONTRAST = """
() => {
  function rgb(text) {
    const m = text.match(/[\\d.]+/g).map(Number);
    return { r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1 };
  }
  function lum(c) {
    const f = v => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  }
  function background(e) {
    for (let n = e; n; n = n.parentElement) {
      const c = rgb(getComputedStyle(n).backgroundColor);
      if (c.a > 0.5) return c;
    }
    return rgb(getComputedStyle(document.body).backgroundColor);
  }
  const found = [];
  for (const e of document.querySelectorAll('body *')) {
    const own = [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    const box = e.getBoundingClientRect();
    const style = getComputedStyle(e);
    if (!own || !box.width || style.visibility === 'hidden' || style.display === 'none') continue;
    const fg = rgb(style.color), bg = background(e);
    const a = lum(fg), b = lum(bg);
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const large = parseFloat(style.fontSize) >= 24 ||
      (parseFloat(style.fontSize) >= 18.66 && parseInt(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) found.push(e.tagName + '.' + e.className + ' ' +
      ratio.toFixed(2) + ' "' + e.textContent.trim().slice(0, 30) + '"');
  }
  return found;
}
"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_meets_wcag_aa_contrast_in_light_and_dark_mode(
    tmp_path: Path, browser: Any, scheme: str
) -> None:
    run = _preference(tmp_path, trials=2, require_reason=True)
    with judge_server(run, "--judge-id", "hu") as server:
        for size in sorted(SIZES):
            context = browser.new_context(viewport=SIZES[size], color_scheme=scheme)
            page = context.new_page()
            page.goto(server.url)
            wait_for_trial(page, 1, 2)
            page.keyboard.press("Enter")  # a missing answer's words are checked too
            page.wait_for_selector("#error")
            assert page.evaluate(CONTRAST) == [], (scheme, size)
            screenshot(page, f"judge-contrast-{scheme}-{size}")
            if size == "phone":  # a pick, so that the history has a row
                page.keyboard.press("l")
                page.locator("#reason").fill("a reason")
                page.keyboard.press("Escape")
                page.keyboard.press("y")
                page.keyboard.press("Enter")
                wait_for_trial(page, 2, 2)
            context.close()
        for size in sorted(SIZES):
            context = browser.new_context(viewport=SIZES[size], color_scheme=scheme)
            page = context.new_page()
            page.goto(server.url + "history")
            page.wait_for_selector("#word-1")
            assert page.evaluate(CONTRAST) == [], (scheme, size, "history")
            screenshot(page, f"judge-history-{scheme}-{size}")
            context.close()
        server.interrupt()


def test_the_page_has_a_heading_named_regions_and_says_saved_and_taken_back(
    tmp_path: Path, browser: Any
) -> None:
    run = _preference(tmp_path, trials=2)
    with page_at(browser, "laptop") as (_, page), judge_server(run, "--judge-id", "io") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 2)
        assert page.locator("h1").inner_text() == "trial 1 of 2"
        assert page.locator("main").count() == 1
        for name in ("Prompt", "Responses", "Your answer", "Tools"):
            assert (
                page.get_by_role("region", name=name).count()
                + page.get_by_role("form", name=name).count()
                + page.get_by_role("navigation", name=name).count()
                == 1
            ), name
        assert page.locator("#status").get_attribute("role") == "status"
        assert page.locator("#status").get_attribute("aria-live") == "polite"
        _answer(page, "l")
        wait_for_trial(page, 2, 2)
        _said(page, "Saved.")
        page.keyboard.press("u")
        wait_for_trial(page, 1, 2)
        _said(page, "Taken back: the comparison is shown again, your answer filled in.")
        server.interrupt()


def test_a_touch_screen_gets_buttons_not_key_hints(tmp_path: Path, browser: Any) -> None:
    run = _preference(tmp_path, trials=2)
    context = browser.new_context(viewport=SIZES["phone"], has_touch=True, is_mobile=True)
    page = context.new_page()
    with judge_server(run, "--judge-id", "ju") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 2)
        assert page.evaluate("matchMedia('(hover: none) and (pointer: coarse)').matches")
        assert page.locator("kbd:visible").count() == 0
        for button in ("#submit", "#skip", "#help-button"):
            assert page.locator(button).is_visible(), button
        page.locator("label:has(input[value='right'])").tap()
        page.locator("label:has(input[name='q1'][value='yes'])").tap()
        page.locator("#submit").tap()
        wait_for_trial(page, 2, 2)
        assert page.locator("#history-link").is_visible()
        screenshot(page, "judge-touch-phone")
        server.interrupt()
    context.close()


def test_help_is_one_key_away_and_the_rater_sees_how_many_are_left(
    tmp_path: Path, browser: Any
) -> None:
    run = make_run(tmp_path, trials=4)
    with page_at(browser, "laptop") as (_, page), judge_server(run, "--judge-id", "ka") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 4)
        assert page.inner_text("#left") == "0 judged · 4 left"
        page.keyboard.press("1")
        wait_for_trial(page, 2, 4)
        assert page.inner_text("#left") == "1 judged · 3 left"
        assert not page.locator("#help").evaluate("e => e.open")  # open on the first only
        page.keyboard.press("?")
        assert page.locator("#help").evaluate("e => e.open")
        assert page.locator("#help-button").get_attribute("aria-expanded") == "true"
        assert "H shows your picks so far" in page.inner_text("#help")
        page.keyboard.press("?")
        assert not page.locator("#help").evaluate("e => e.open")
        server.interrupt()


def test_the_favicon_request_is_answered(tmp_path: Path) -> None:
    run = make_run(tmp_path, trials=1)
    with judge_server(run, "--judge-id", "lu") as server:
        status, body = get(server.origin + "/favicon.ico")
        assert (status, body) == (204, "")
        status, icon = get(server.url + "static/icon.svg")
        assert status == 200
        assert icon.startswith("<svg")
        server.interrupt()
