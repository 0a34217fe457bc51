"""the judging page, ``bt-judge RUN --web``, used in a real browser (Chromium through
Playwright): whole sessions by keyboard and by mouse, preference with reasons and extra
questions, pair nicknames, a closed tab, a reload and a restarted server, tokens, and response
text carrying script payloads. Screenshots go to test-output/ (not committed).
"""

from __future__ import annotations

import re
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blindtest.designing.build import Normalization
from blindtest.rundir import artifacts

from judge_runs import answer_key, make_run, picks_of
from web_page import chromium, judge_server, screenshot, wait_for_keys

WIDE = {"width": 1400, "height": 900}
NARROW = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=WIDE)
    opened = context.new_page()
    dialogs: list[str] = []
    opened.on("dialog", lambda d: _dismiss(d, dialogs))
    opened.dialogs = dialogs
    try:
        yield opened
    finally:
        context.close()


def progress(page: Any) -> str:
    return str(page.locator("#progress").inner_text())


def wait_for_trial(page: Any, n: int, total: int) -> None:
    page.wait_for_function(
        "t => document.getElementById('progress') && "
        "document.getElementById('progress').textContent === t",
        arg=f"trial {n} of {total}",
    )
    wait_for_keys(page)


def odd_positions(run: Path) -> list[int]:
    return [entry["odd_position"] for entry in answer_key(run)]


def get(url: str, data: bytes | None = None) -> tuple[int, str]:
    """GET ``url`` (POST ``data``), following a redirect. No clock: the server answers every
    request once what it waits for has happened (or says it is not judging now)."""
    request = urllib.request.Request(url, data=data)
    try:
        with urllib.request.urlopen(request) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


#: The page the server shows while the driver has not drawn the next trial yet.
WAITING = "No trial is waiting for you now"


def shown(url: str, data: bytes | None = None) -> str:
    """The page after a GET (or a POST of ``data``) once the driver has drawn what comes next:
    a page that says no trial is waiting yet is fetched again (each fetch waits on the server
    for the driver, however busy the machine)."""
    status, body = get(url, data)
    while WAITING in body:
        status, body = get(url.rsplit("/", 1)[0] + "/")
    assert status in (200, 422), (status, body)
    return body


def form_of(body: str, **fields: object) -> bytes:
    """The form a trial page sends (its hidden fields: the trial and the turn's mark), with
    ``fields``."""
    hidden = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', body))
    assert {"trial", "mark"} <= set(hidden), body
    return urllib.parse.urlencode({**hidden, **fields}).encode()


# --------------------------------------------------------------------------- triangle


def test_triangle_20_trials_by_keyboard_closing_the_tab_at_trial_9(
    tmp_path: Path, browser: Any, page: Any, invoke: Any
) -> None:
    """Done when: a person judges 20 triangle trials with the keyboard alone, closes the tab
    at trial 9, reopens the link and finishes; bt-analyze scores it like the terminal."""
    run = make_run(tmp_path)
    odd = odd_positions(run)
    with judge_server(run, "--judge-id", "alice") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 20)
        screenshot(page, "judge-triangle-wide")
        for n in range(1, 9):
            wait_for_trial(page, n, 20)
            page.keyboard.press(str(odd[n - 1]))
        wait_for_trial(page, 9, 20)
        page.close()  # the tab is closed at trial 9
        again = browser.new_page(viewport=WIDE)
        again.goto(server.url)
        wait_for_trial(again, 9, 20)
        for n in range(9, 21):
            wait_for_trial(again, n, 20)
            again.keyboard.press(str(odd[n - 1]))
        again.wait_for_selector("#message")
        assert "All 20 trials judged" in again.inner_text("#message")
        code, out, err = server.finish()
    assert code == 0, err
    assert "All 20 trials judged" in out
    picks = picks_of(run / artifacts.PICKS)
    assert [p["trial"] for p in picks] == list(range(1, 21))
    assert {p["judge_kind"] for p in picks} == {"human"}
    result = invoke("analyze", run)
    assert result.exit_code == 0, result.output
    assert "20 of 20 correct" in result.output


def test_triangle_20_trials_by_mouse_and_a_double_click_is_stored_once(
    tmp_path: Path, page: Any
) -> None:
    run = make_run(tmp_path)
    odd = odd_positions(run)
    with judge_server(run, "--judge-id", "bob") as server:
        page.goto(server.url)
        for n in range(1, 21):
            wait_for_trial(page, n, 20)
            button = page.locator(f"button[data-key='{odd[n - 1]}']")
            if n == 3:
                button.dblclick()
            else:
                button.click()
        page.wait_for_selector("#message")
        code, _, err = server.finish()
    assert code == 0, err
    picks = picks_of(run / artifacts.PICKS)
    assert [p["trial"] for p in picks] == list(range(1, 21))
    assert [p["pick"] for p in picks] == odd


def test_the_second_click_of_a_double_click_landing_on_the_next_trial_answers_nothing(
    tmp_path: Path, page: Any
) -> None:
    """A local bt-judge can save a pick and show the next trial within a double click's
    interval: the second click then lands on the next trial's button, and must not answer a
    trial the person never read (the browser counts it as click 2: event.detail)."""
    run = make_run(tmp_path, trials=3)
    odd = odd_positions(run)
    with judge_server(run, "--judge-id", "dora") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 3)
        page.locator(f"button[data-key='{odd[0]}']").click()
        wait_for_trial(page, 2, 3)
        # the second click of the double click, arriving on trial 2's page
        page.dispatch_event(f"button[data-key='{odd[0]}']", "click", {"detail": 2})
        page.locator(f"button[data-key='{odd[1]}']").click()  # a person's own click counts
        wait_for_trial(page, 3, 3)
        page.keyboard.press(str(odd[2]))
        page.wait_for_selector("#message")
        code, _, err = server.finish()
    assert code == 0, err
    picks = picks_of(run / artifacts.PICKS)
    assert [(p["trial"], p["pick"]) for p in picks] == [(1, odd[0]), (2, odd[1]), (3, odd[2])]


def test_a_repeated_pick_post_is_stored_once(tmp_path: Path) -> None:
    run = make_run(tmp_path, trials=3)
    with judge_server(run, "--judge-id", "carol") as server:
        first = shown(server.url)  # the page of trial 1, as a browser has it
        codes: list[int] = []

        def post(pick: int) -> None:
            codes.append(get(server.url + "pick", form_of(first, pick=pick))[0])

        both = [threading.Thread(target=post, args=(p,)) for p in (1, 2)]
        for thread in both:
            thread.start()
        for thread in both:
            thread.join()
        assert codes == [200, 200]  # both redirected to the page (urllib follows the 303)
        body = shown(server.url + "pick", form_of(first, pick=3))  # a stale form: no-op
        assert "trial 2 of 3" in body
        server.interrupt()
    picks = picks_of(run / artifacts.PICKS)
    assert [p["trial"] for p in picks] == [1]
    assert picks[0]["pick"] in (1, 2)  # whichever of the two the server read first


def test_reload_mid_session_and_a_server_restart_resume(tmp_path: Path, page: Any) -> None:
    run = make_run(tmp_path, trials=10)
    odd = odd_positions(run)
    with judge_server(run, "--judge-id", "dana") as server:
        page.goto(server.url)
        for n in range(1, 5):
            wait_for_trial(page, n, 10)
            page.keyboard.press(str(odd[n - 1]))
        wait_for_trial(page, 5, 10)
        page.reload()
        wait_for_trial(page, 5, 10)
        page.keyboard.press(str(odd[4]))
        wait_for_trial(page, 6, 10)
        code, _, err = server.interrupt()
    assert code == 130
    assert "5 of 10 trials judged and saved" in err
    with judge_server(run, "--judge-id", "dana") as server:
        assert server.url.startswith("http://127.0.0.1:")
        page.goto(server.url)
        wait_for_trial(page, 6, 10)
        for n in range(6, 11):
            wait_for_trial(page, n, 10)
            page.keyboard.press(str(odd[n - 1]))
        page.wait_for_selector("#message")
        code, _, err = server.finish()
    assert code == 0, err
    assert [p["trial"] for p in picks_of(run / artifacts.PICKS)] == list(range(1, 11))


# --------------------------------------------------------------------------- preference, pair


def test_preference_session_with_reasons_and_extra_questions(
    tmp_path: Path, browser: Any, page: Any
) -> None:
    questions = ("Is it correct?", "Would it pass review unchanged?")
    run = make_run(tmp_path, "preference", 6, extra_questions=questions)
    keys = ["l", "r", "t", "l", "r", "l"]
    with judge_server(run, "--judge-id", "erin") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 6)
        screenshot(page, "judge-preference-wide")
        narrow = browser.new_page(viewport=NARROW)
        narrow.goto(server.url)
        wait_for_trial(narrow, 1, 6)
        screenshot(narrow, "judge-preference-narrow")
        columns = narrow.evaluate(
            "getComputedStyle(document.getElementById('options')).gridTemplateColumns"
        )
        assert len(columns.split()) == 1  # stacked on a phone
        wide = page.evaluate(
            "getComputedStyle(document.getElementById('options')).gridTemplateColumns"
        )
        assert len(wide.split()) == 2
        narrow.close()
        for n, key in enumerate(keys, start=1):
            wait_for_trial(page, n, 6)
            page.keyboard.press(key)
            page.keyboard.press("Tab")  # from the choice to the reason box
            page.keyboard.type(f"reason {n}")
            page.check("input[name='q1'][value='yes']")
            page.check(f"input[name='q2'][value='{'no' if n % 2 else 'yes'}']")
            page.locator("#reason").press("Enter")
        page.wait_for_selector("#message")
        code, _, err = server.finish()
    assert code == 0, err
    picks = picks_of(run / artifacts.PICKS)
    assert [p["pick"] for p in picks] == ["left", "right", "tie", "left", "right", "left"]
    assert [p["reason"] for p in picks] == [f"reason {n}" for n in range(1, 7)]
    assert picks[0]["answers"] == {questions[0]: True, questions[1]: False}
    assert picks[1]["answers"] == {questions[0]: True, questions[1]: True}


def test_preference_without_a_reason_is_asked_again(tmp_path: Path, page: Any) -> None:
    run = make_run(tmp_path, "preference", 2, require_reason=True)
    with judge_server(run, "--judge-id", "erin") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 2)
        page.evaluate("document.getElementById('reason').removeAttribute('required')")
        page.keyboard.press("r")
        page.locator("#reason").press("Enter")
        page.wait_for_selector("#error")
        assert "reason" in page.inner_text("#error")
        wait_for_trial(page, 1, 2)
        server.interrupt()
    assert not (run / artifacts.PICKS).exists() or picks_of(run / artifacts.PICKS) == []


def test_pair_session_with_nicknames_by_keyboard(tmp_path: Path, page: Any) -> None:
    run = make_run(tmp_path, "pair", 4)
    with judge_server(run, "--judge-id", "finn") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 4)
        page.fill("input[name='nick1']", "fox")
        page.fill("input[name='nick2']", "owl")
        page.click("button[value='1']")
        for n in range(2, 5):
            wait_for_trial(page, n, 4)
            assert "option 1 is fox" in page.inner_text("#answer")
            page.keyboard.press("1" if n % 2 else "2")
        page.wait_for_selector("#message")
        code, _, err = server.finish()
    assert code == 0, err
    picks = picks_of(run / artifacts.PICKS)
    assert [p["pick"] for p in picks] == ["fox", "owl", "fox", "owl"]
    assert {tuple(p["nicknames"]) for p in picks} == {("fox", "owl")}


# --------------------------------------------------------------------------- security


def test_no_token_or_another_reviewers_token_gets_403_and_nothing_else(
    tmp_path: Path, page: Any
) -> None:
    run = make_run(tmp_path, trials=3)
    with (
        judge_server(run, "--judge-id", "alice", "--out", str(run / "picks-alice.jsonl")) as a,
        judge_server(run, "--judge-id", "bob", "--out", str(run / "picks-bob.jsonl")) as b,
    ):
        secret_words = ("Answer 1", "Prompt number", "model-a", "arrangement", "alice", "bob")
        for path in (
            "/", "/design.json", "/responses.jsonl", "/picks.jsonl", "/static/keys.js",
            f"/{b.token}/", f"/{b.token}/static/page.css", f"/{a.token[:-1]}/",
            f"/{a.token}x/", f"/{a.token}/../design.json", f"/x/{a.token}/",
        ):  # fmt: skip
            status, body = get(a.origin + path)
            assert status == 403, path
            assert "This link does not open a judging page" in body, path
            assert "ask the person running <code>bt-judge --web</code> for your link" in body
            assert not any(word in body for word in secret_words)
            assert a.token not in body
            assert b.token not in body
        status, _ = get(a.origin + "/", b"trial=1&pick=1")
        assert status == 403
        status, _ = get(f"{a.origin}/{b.token}/pick", b"trial=1&pick=1")
        assert status == 403
        for path in ("design.json", "responses.jsonl", "picks-bob.jsonl", "static/../design.json"):
            status, body = get(a.url + path)
            assert status in (403, 404), path
            assert "arrangement" not in body
        response = page.goto(a.origin + "/")
        assert response.status == 403
        page.goto(a.url)
        wait_for_trial(page, 1, 3)
        a.interrupt()
        b.interrupt()
    assert not (run / "picks-alice.jsonl").exists() or picks_of(run / "picks-alice.jsonl") == []


PAYLOADS = (
    "<script>window.__pwned = 1; alert('script')</script>",
    '<img src="x" onerror="window.__pwned = 2; alert(\'img\')">',
    "[press me](javascript:window.__pwned=3;alert('link'))",
    "<!-- hidden comment: model-a wrote this -->",
    '<a href="javascript:alert(4)">raw link</a> <svg onload="alert(5)"></svg>',
)


def xss_texts(trial: int, entry: dict[str, Any]) -> list[str]:
    text = "\n\n".join(PAYLOADS)
    return [f"{text}\n\nOption {i} of trial {trial}." for i in range(1, 4)]


@pytest.mark.parametrize("plain", [False, True], ids=["markdown", "stripped"])
def test_script_payloads_in_responses_are_shown_as_text_and_never_run(
    tmp_path: Path, page: Any, plain: bool
) -> None:
    run = make_run(
        tmp_path,
        trials=2,
        texts=xss_texts,
        prompt=lambda i: f"<script>alert('prompt {i}')</script> [x](javascript:alert(1))",
        normalization=Normalization(strip_formatting=plain),
    )
    with judge_server(run, "--judge-id", "gus") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 2)
        if not plain:
            screenshot(page, "judge-xss-wide")
        text = page.inner_text("#options")
        for shown in ("<script>", "onerror=", "<!-- hidden comment", "<svg onload"):
            assert shown in text
        assert "javascript:" in text
        assert (
            page.locator("#options script, #options img, #options svg, #prompt script").count() == 0
        )
        assert page.locator("a[href^='javascript']").count() == 0
        page.keyboard.press("1")
        wait_for_trial(page, 2, 2)
        page.mouse.click(10, 10)
        assert page.evaluate("window.__pwned === undefined")
        assert page.dialogs == []
        server.interrupt()


LONG = (
    "## A heading\n\nSome **bold** text:\n\n- first with `code`\n- second\n\n"
    "```python\ndef f(argument_one, argument_two, argument_three, argument_four, five):\n"
    "    return argument_one  # kept as code\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    + "\n\n".join(f"Paragraph {i}: lorem ipsum dolor sit amet, consectetur." for i in range(40))
)


def test_long_markdown_side_by_side_each_option_scrolls_and_code_is_kept(
    tmp_path: Path, browser: Any, page: Any
) -> None:
    run = make_run(tmp_path, trials=2, texts=lambda t, e: [LONG, "A short one.", LONG])
    with judge_server(run, "--judge-id", "hal") as server:
        page.goto(server.url)
        wait_for_trial(page, 1, 2)
        screenshot(page, "judge-long-markdown-wide")
        boxes = [page.locator(f"#option-{i}").bounding_box() for i in (1, 2, 3)]
        assert boxes[0]["y"] == boxes[1]["y"] == boxes[2]["y"]  # three columns
        assert boxes[0]["x"] < boxes[1]["x"] < boxes[2]["x"]
        scrolls = page.evaluate(
            "[1, 2, 3].map(i => { const e = document.getElementById('option-' + i);"
            " return e.scrollHeight > e.clientHeight; })"
        )
        assert scrolls == [True, False, True]  # each long option scrolls on its own
        page.locator("#option-1").evaluate("e => e.scrollTop = 400")
        assert page.locator("#option-3").evaluate("e => e.scrollTop") == 0
        assert page.locator("#option-1 pre code").inner_text().startswith("def f(argument_one")
        assert page.locator("#option-1 table td").count() == 2
        narrow = browser.new_page(viewport=NARROW)
        narrow.goto(server.url)
        wait_for_trial(narrow, 1, 2)
        screenshot(narrow, "judge-long-markdown-narrow")
        stacked = [narrow.locator(f"#option-{i}").bounding_box() for i in (1, 2, 3)]
        assert stacked[0]["x"] == stacked[1]["x"] == stacked[2]["x"]
        assert stacked[0]["y"] < stacked[1]["y"] < stacked[2]["y"]
        width = narrow.evaluate("document.documentElement.scrollWidth")
        assert width <= NARROW["width"]  # no sideways scrolling of the page on a phone
        narrow.close()
        server.interrupt()


def test_another_host_than_loopback_prints_a_warning(tmp_path: Path) -> None:
    run = make_run(tmp_path, trials=2)
    with judge_server(run, "--judge-id", "ivy", "--host", "0.0.0.0") as server:
        assert any("anyone on the network who has the link can judge" in x for x in server.lines)
        server.interrupt()
    with judge_server(run, "--judge-id", "ivy") as server:
        assert not any("warning" in x for x in server.lines)
        assert server.url.startswith("http://127.0.0.1:")
        server.interrupt()


def test_page_options_without_web_are_refused(tmp_path: Path, invoke: Any) -> None:
    run = make_run(tmp_path, trials=2)
    result = invoke("judge", run, "--port", "8080")
    assert result.exit_code == 2
    assert "--port: only for the judging page; add --web" in result.stderr
    result = invoke("judge", run, "--web", "--judge", "bot:length")
    assert result.exit_code == 2
    assert "drop --judge bot:length" in result.stderr
    assert not (run / artifacts.PICKS).exists()


def test_without_chromium_browser_tests_skip_naming_the_install_or_fail_in_ci(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import web_page

    monkeypatch.setattr("web_page.shutil.which", lambda name: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y chromium"):
        web_page.chromium_path()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="apt-get install -y chromium"):
        web_page.chromium_path()


def test_the_page_works_without_javascript(tmp_path: Path, browser: Any) -> None:
    """Plain forms: with scripts off, the buttons still judge (the keys need the page's own
    script, served by bt-judge; nothing is fetched from elsewhere)."""
    run = make_run(tmp_path, trials=3)
    odd = odd_positions(run)
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    with judge_server(run, "--judge-id", "noscript") as server:
        page.goto(server.url)
        for n in range(1, 4):
            assert progress(page) == f"trial {n} of 3"
            page.click(f"button[data-key='{odd[n - 1]}']")
        assert "All 3 trials judged" in page.inner_text("#message")
        code, _, err = server.finish()
    context.close()
    assert code == 0, err
    assert [p["pick"] for p in picks_of(run / artifacts.PICKS)] == odd


def _dismiss(dialog: Any, seen: list[str]) -> None:
    """A dialog must never open: note its message and close it, so the test can fail on it."""
    seen.append(dialog.message)
    dialog.dismiss()
