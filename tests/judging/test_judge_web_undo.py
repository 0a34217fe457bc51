"""Taking back the last pick on the judging page, as the terminal's ``u`` does: by key and by
button, in Chromium at a laptop's 1366x768 and a phone's 390x844. The page appends the new
pick with ``correction: true`` (the record the terminal writes), so the file stays
append-only and every reader already counts the judge's last word."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_judge_web import form_of, get, odd_positions, shown, wait_for_trial

from blindtest.judging.driver import TakeBack, Turn
from blindtest.judging.web.reviewer import Reviewer
from blindtest.model.picks import Pick, load_judge_run, load_picks
from blindtest.rundir import artifacts

from judge_runs import make_run, picks_of
from web_page import LAPTOP, SIZES, chromium, judge_server, page_at, screenshot


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture(params=sorted(SIZES))
def sized(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[str, Any]]:
    with page_at(browser, request.param) as named:
        yield named


def _wrong(odd: int) -> int:
    return odd % 3 + 1


def test_a_stray_key_is_taken_back_by_key_and_by_button(
    tmp_path: Path, sized: tuple[str, Any], invoke: Any
) -> None:
    size, page = sized
    run = make_run(tmp_path, trials=4)
    odd = odd_positions(run)
    with judge_server(run, "--judge-id", "uma") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 4)
        assert page.locator("#undo").count() == 0  # nothing to take back yet
        page.keyboard.press(str(_wrong(odd[0])))  # a stray key: recorded at once
        wait_for_trial(page, 2, 4)
        assert page.inner_text("#undo") == "U undo trial 1"
        screenshot(page, f"judge-undo-offered-{size}")
        page.keyboard.press("u")  # by key
        page.wait_for_selector("#again")
        wait_for_trial(page, 1, 4)
        assert "took back your pick for trial 1" in page.inner_text("#again")
        assert "If you leave now, the earlier pick stands" in page.inner_text("#again")
        screenshot(page, f"judge-undo-again-{size}")
        page.keyboard.press(str(odd[0]))
        wait_for_trial(page, 2, 4)
        page.keyboard.press(str(_wrong(odd[1])))
        wait_for_trial(page, 3, 4)
        page.click("#undo")  # by button (a tap on a phone)
        page.wait_for_selector("#again")
        wait_for_trial(page, 2, 4)
        page.click(f"button[data-key='{odd[1]}']")
        for n in (3, 4):
            wait_for_trial(page, n, 4)
            page.keyboard.press(str(odd[n - 1]))
        page.wait_for_selector("#message")
        code, _, err = server.finish()
    assert code == 0, err
    lines = picks_of(run / artifacts.PICKS)
    assert [(p["trial"], p.get("correction", False)) for p in lines] == [
        (1, False), (1, True), (2, False), (2, True), (3, False), (4, False)
    ]  # fmt: skip
    assert [p["pick"] for p in lines] == [
        _wrong(odd[0]), odd[0], _wrong(odd[1]), odd[1], odd[2], odd[3]
    ]  # fmt: skip
    _, read = load_picks(run)
    assert read.corrections == 2
    assert [p.pick for p in read.picks] == odd  # the judge's last word on each trial
    result = invoke("analyze", run)
    assert result.exit_code == 0, result.output
    assert "4 of 4 correct" in result.output


def test_an_undo_from_a_stale_page_or_twice_takes_back_one_pick_only(tmp_path: Path) -> None:
    run = make_run(tmp_path, trials=3)
    odd = odd_positions(run)
    with judge_server(run, "--judge-id", "vic") as server:
        first = shown(server.url)  # trial 1's page, as a browser has it
        second = shown(server.url + "pick", form_of(first, pick=odd[0]))
        assert "trial 2 of 3" in second
        body = shown(server.url + "undo", form_of(first))  # a stale page's undo: no-op
        assert "trial 2 of 3" in body
        again = shown(server.url + "undo", form_of(second))
        assert "trial 1 of 3" in again
        assert "took back your pick for trial 1" in again
        body = shown(server.url + "undo", form_of(second))  # again: nothing left to take
        assert "trial 1 of 3" in body
        assert 'id="undo"' not in body
        # Trial 1 picked anew, trial 2's page shows an Undo again: the page from before the
        # take-back names trial 2 too, but not this showing of it, so it takes nothing back.
        third = shown(server.url + "pick", form_of(again, pick=odd[0]))
        assert "trial 2 of 3" in third
        assert 'id="undo"' in third
        assert "trial 2 of 3" in shown(server.url + "undo", form_of(second))
        server.interrupt()
    lines = picks_of(run / artifacts.PICKS)
    assert [(p["trial"], p["pick"], p.get("correction", False)) for p in lines] == [
        (1, odd[0], False), (1, odd[0], True)
    ]  # fmt: skip


@pytest.mark.parametrize("first", ["pick", "undo"])
def test_a_pick_and_an_undo_sent_together_from_one_page_do_one_thing(
    tmp_path: Path, first: str
) -> None:
    """A double click that reaches both buttons (or a key and a click): the two requests race
    to the server, which acts on whichever it reads first and ignores the other."""
    run = make_run(tmp_path, trials=3)
    odd = odd_positions(run)
    with judge_server(run, "--judge-id", "wes") as server:
        second = shown(server.url + "pick", form_of(shown(server.url), pick=odd[0]))
        requests = {
            "pick": (server.url + "pick", form_of(second, pick=odd[1])),
            "undo": (server.url + "undo", form_of(second)),
        }
        order = [first, *(name for name in requests if name != first)]
        threads = [threading.Thread(target=get, args=requests[name]) for name in order]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        now = shown(server.url)
        server.interrupt()
    lines = [(p["trial"], p.get("correction", False)) for p in picks_of(run / artifacts.PICKS)]
    if "trial 3 of 3" in now:  # the pick was read first
        assert lines == [(1, False), (2, False)]
    else:  # the undo was: trial 1 is shown again, and the pick for trial 2 was not taken
        assert "trial 1 of 3" in now
        assert "took back your pick for trial 1" in now
        assert lines == [(1, False)]


def test_take_back_is_an_answer_the_page_sends_for_the_shown_trial_only(tmp_path: Path) -> None:
    run = load_judge_run(make_run(tmp_path, trials=2))
    reviewer = Reviewer(run.view, "xia", "token")
    last = Pick(trial=1, judge="xia", pick=2)
    turn = Turn(run.view.trials[1], (), judged=1, judged_now=1, first=False, undoable=last)
    answers: list[object] = []
    asking = threading.Thread(target=lambda: answers.append(reviewer.ask(turn)))
    asking.start()
    mark = reviewer.screen().mark  # waits for the driver's thread to draw trial 2
    assert reviewer.take_back({"trial": "1", "mark": mark}) is None  # another trial's page
    assert reviewer.take_back({"trial": "2", "mark": "x" + mark}) is None  # another showing
    assert reviewer.take_back({"trial": "2"}) is None  # a form without its mark
    assert reviewer.take_back({"trial": "2", "mark": mark}) is not None
    assert reviewer.take_back({"trial": "2", "mark": mark}) is None  # a second click
    asking.join()
    assert answers == [TakeBack()]


def test_the_undo_form_works_without_javascript(tmp_path: Path, browser: Any) -> None:
    run = make_run(tmp_path, trials=2)
    odd = odd_positions(run)
    context = browser.new_context(java_script_enabled=False, viewport=LAPTOP)
    page = context.new_page()
    with judge_server(run, "--judge-id", "yan") as server:
        page.goto(server.url)
        page.click(f"button[data-key='{_wrong(odd[0])}']")
        assert "trial 2 of 2" in page.inner_text("#progress")
        page.click("#undo")
        assert "trial 1 of 2" in page.inner_text("#progress")
        page.click(f"button[data-key='{odd[0]}']")
        page.click(f"button[data-key='{odd[1]}']")
        assert "All 2 trials judged" in page.inner_text("#message")
        code, _, err = server.finish()
    context.close()
    assert code == 0, err
    assert [p.pick for p in load_picks(run)[1].picks] == odd
