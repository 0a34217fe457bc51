"""a panel of reviewers on the judging page (``--panel``, ``--per-judge``,
``--session-cap``), in a real browser and over plain HTTP."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_judge_web import form_of, get, shown, wait_for_trial

from blindtest.errors import BadInput
from blindtest.judging.web.panel import panel_names
from blindtest.model.assignment import assign, coverage, reviewer_order
from blindtest.pipeline.recompute import verify_run
from blindtest.rundir import artifacts

from judge_runs import answer_key, make_run, picks_of, write_picks
from web_page import chromium, judge_server, screenshot, wait_for_keys


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def links(lines: list[str]) -> dict[str, str]:
    found = {}
    for line in lines:
        match = re.match(r"^(\S+) \(\d+ trials\): open (http\S+)$", line)
        if match:
            found[match.group(1)] = match.group(2)
    return found


def read_all_links(server: Any, count: int) -> dict[str, str]:
    found = links(server.lines)
    while len(found) < count:
        server.lines.append(server.proc.stdout.readline().rstrip("\n"))
        found = links(server.lines)
    return found


def test_per_judge_14_of_20_for_three_reviewers_covers_every_trial_twice() -> None:
    names = ("alice", "bob", "carol")
    dealt = assign("judge-tests", 20, names, 14)
    assert {len(v) for v in dealt.values()} == {14}
    assert all(len(set(v)) == 14 for v in dealt.values())
    assert min(coverage(dealt, 20).values()) >= 2
    assert assign("judge-tests", 20, names, 14) == dealt  # re-derived from the seed
    assert assign("another-seed", 20, names, 14) != dealt
    for reviewers in range(2, 6):
        for trials in (5, 12, 20, 31):
            for n in range(1, trials + 1):
                got = coverage(assign("s", trials, [f"r{i}" for i in range(reviewers)], n), trials)
                if reviewers * n >= 2 * trials:
                    assert min(got.values()) >= 2
                assert max(got.values()) - min(got.values()) <= 1  # spread evenly


def test_panel_names_are_checked() -> None:
    assert panel_names("alice, bob ,carol") == ("alice", "bob", "carol")
    for bad, words in (("alice", "two or more"), ("a,A", "named twice"), ("a,b/c", "not a")):
        with pytest.raises(BadInput, match=words):
            panel_names(bad)


def _judge_over_http(url: str, odd: list[int], count: int) -> str:
    """Judge ``count`` trials as the page asks them; the page after the last pick."""
    body = ""
    for _ in range(count):
        body = shown(url)
        match = re.search(r'name="trial" value="(\d+)"', body)
        assert match, body
        trial = int(match.group(1))
        body = shown(url + "pick", form_of(body, pick=odd[trial - 1]))
    if "/static/page.css" in body:  # the end screen's stylesheet, fetched as a browser does
        get(url + "static/page.css")
    return body


def test_three_reviewers_per_judge_14_then_bt_analyze_scores_the_panel(
    tmp_path: Path, invoke: Any
) -> None:
    """Done when: three reviewers with --per-judge 14 over 20 trials give every trial two or
    more reviewers, and the report shows the panel (one row per judge)."""
    run = make_run(tmp_path)
    odd = [e["odd_position"] for e in answer_key(run)]
    with judge_server(run, "--panel", "alice,bob,carol", "--per-judge", "14") as server:
        urls = read_all_links(server, 3)
        assert set(urls) == {"alice", "bob", "carol"}
        assert len({u.rsplit("/", 2)[1] for u in urls.values()}) == 3  # a token each
        for url in urls.values():
            body = _judge_over_http(url, odd, 14)
            assert "All 14 trials judged" in body
            assert "correct" not in body.lower()
        code, out, err = server.finish()
    assert code == 0, err
    assert "Every trial gets 2 or more reviewers" in out
    assert "The panel is closed: alice 14 of 14, bob 14 of 14, carol 14 of 14" in out
    files = [run / f"picks-{n}.jsonl" for n in ("alice", "bob", "carol")]
    seen: dict[int, int] = {}
    for path in files:
        picks = picks_of(path)
        assert len(picks) == 14
        assert {p["panel"]["per_judge"] for p in picks} == {14}
        for p in picks:
            seen[p["trial"]] = seen.get(p["trial"], 0) + 1
    assert min(seen.values()) >= 2
    assert len(seen) == 20
    args = [a for path in files for a in ("--picks", path)]
    result = invoke("analyze", run, *args, "--json")
    assert result.exit_code == 0, result.output
    report = artifacts.read_json(run / artifacts.REPORT, "report")
    assert report["verdict"] == "distinguished"
    assert sorted(report["per_judge"]) == ["alice", "bob", "carol"]
    agree = report["reviewer_agreement"]
    assert agree["trials_shared"] == 20
    assert agree["rate"] == 1.0  # every reviewer picked the odd one
    summary = invoke("analyze", run, *args, "--force")
    assert "judges agreeing    100% of" in summary.output


def test_two_reviewer_panel_in_the_browser_each_sees_only_their_trials(
    tmp_path: Path, browser: Any
) -> None:
    run = make_run(tmp_path, trials=6)
    odd = [e["odd_position"] for e in answer_key(run)]
    with judge_server(run, "--panel", "alice,bob", "--per-judge", "6") as server:
        urls = read_all_links(server, 2)
        pages = {}
        for name, url in urls.items():
            context = browser.new_context(viewport={"width": 1200, "height": 800})
            pages[name] = context.new_page()
            pages[name].goto(url)
            wait_for_trial(pages[name], 1, 6)
        screenshot(pages["bob"], "panel-bob-wide")
        origin = "/".join(urls["bob"].split("/", 3)[:3])
        alice = urls["alice"].rstrip("/").rsplit("/", 1)[1]
        assert get(f"{origin}/{alice}x/")[0] == 403
        assert get(f"{origin}/picks-bob.jsonl")[0] == 403
        assert get(urls["alice"] + "../picks-bob.jsonl")[0] in (403, 404)
        for n in range(1, 7):  # the two reviewers take turns, each at their own pace
            for name in ("alice", "bob"):
                wait_for_trial(pages[name], n, 6)
                shown = pages[name].locator("#answer input[name='trial']")
                trial = int(shown.get_attribute("value"))
                pages[name].keyboard.press(str(odd[trial - 1]))
        for page in pages.values():
            page.wait_for_selector("#message")
        code, _, err = server.finish()
    assert code == 0, err
    assert len(picks_of(run / "picks-alice.jsonl")) == len(picks_of(run / "picks-bob.jsonl")) == 6


def test_session_cap_shows_a_break_screen_then_continues(tmp_path: Path, browser: Any) -> None:
    run = make_run(tmp_path, trials=5)
    odd = [e["odd_position"] for e in answer_key(run)]
    with judge_server(run, "--judge-id", "kim", "--session-cap", "3") as server:
        page = browser.new_page()
        page.goto(server.url)
        for n in range(1, 4):
            wait_for_trial(page, n, 5)
            page.keyboard.press(str(odd[n - 1]))
        page.wait_for_selector("#message")
        assert "Time for a break" in page.inner_text("#message")
        assert "judged 3 trials" in page.inner_text("#message")
        screenshot(page, "judge-break")
        wait_for_keys(page)
        page.keyboard.press("c")
        wait_for_trial(page, 4, 5)
        page.keyboard.press(str(odd[3]))
        wait_for_trial(page, 5, 5)
        page.keyboard.press(str(odd[4]))
        page.wait_for_selector("#message")
        assert "All 5 trials judged" in page.inner_text("#message")
        code, _, err = server.finish()
    assert code == 0, err


def test_panel_options_are_checked(tmp_path: Path, invoke: Any) -> None:
    run = make_run(tmp_path, trials=4)
    for args, words in (
        (["--web", "--per-judge", "2"], "--per-judge deals trials to a panel; add --panel"),
        (["--panel", "a,b"], "--panel: only for the judging page; add --web"),
        (["--web", "--panel", "a,b", "--judge-id", "x"], "drop --judge-id/--out"),
        (["--web", "--panel", "a,b", "--per-judge", "5"], "--per-judge 5: give 1 to 4"),
    ):
        result = invoke("judge", run, *args)
        assert result.exit_code == 2, (args, result.output)
        assert words in result.stderr, (args, result.stderr)
    assert sorted(p.name for p in run.iterdir() if p.name.startswith("picks")) == []


def test_each_reviewer_is_asked_in_an_order_of_its_own_and_the_operator_sees_counts(
    tmp_path: Path,
) -> None:
    run = make_run(tmp_path, trials=10)
    odd = [e["odd_position"] for e in answer_key(run)]
    with judge_server(run, "--panel", "alice,bob") as server:
        urls = read_all_links(server, 2)
        for url in urls.values():
            _judge_over_http(url, odd, 10)
        code, out, err = server.finish()
    assert code == 0, err
    seed = str(artifacts.load_design(run).design["seed"])
    asked = {}
    for name in ("alice", "bob"):
        lines = picks_of(run / f"picks-{name}.jsonl")
        asked[name] = [p["trial"] for p in lines]
        assert tuple(asked[name]) == reviewer_order(seed, name, range(1, 11))
        assert {p["panel"]["order"] for p in lines} == {"reviewer"}
    assert asked["alice"] != asked["bob"]  # fatigue falls on different comparisons
    # The operator's terminal: counts only, and who has finished; never a pick or a trial.
    progress = [line for line in out.splitlines() if "of 10" in line]
    assert "alice has finished (10 of 10)." in out
    assert "bob has finished (10 of 10)." in out
    assert any(line.startswith("progress: alice 1 of 10, bob ") for line in progress)
    for line in progress:
        assert not re.search(r"trial \d|left|right|correct", line), line
    verified = verify_run(run)  # a synthetic run: no responses, so only the picks are checked
    assert verified.differences == []
    assert any("each reviewer's order" in name for name in verified.checked)


def test_bt_verify_re_derives_each_reviewers_order(tmp_path: Path) -> None:
    run = make_run(tmp_path, trials=6)
    odd = [e["odd_position"] for e in answer_key(run)]
    with judge_server(run, "--panel", "ann,ben") as server:
        urls = read_all_links(server, 2)
        for url in urls.values():
            _judge_over_http(url, odd, 6)
        code, _, err = server.finish()
    assert code == 0, err
    path = run / "picks-ann.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[0], lines[1] = lines[1], lines[0]  # as if ann had been asked in another order
    path.write_text("".join(lines))
    found = [(d.where, d.recorded) for d in verify_run(run).differences]
    assert found == [("picks-ann.jsonl:2/panel order", found[0][1])]
    assert "comes before its turn in ann's own order" in found[0][1]


def test_a_panel_made_before_reviewers_had_their_own_order_keeps_verifying(
    tmp_path: Path,
) -> None:
    run = make_run(tmp_path, trials=4)
    panel = {"reviewers": ["ann", "ben"], "per_judge": None}  # no "order": design order
    for name in ("ann", "ben"):
        write_picks(
            run / f"picks-{name}.jsonl",
            [
                {"schema": "blindtest/picks@1", "trial": t, "judge": name, "pick": 1,
                 "judge_kind": "human", "panel": panel}
                for t in range(1, 5)
            ],
        )  # fmt: skip
    verified = verify_run(run)
    assert verified.differences == []
    assert not any("each reviewer's order" in name for name in verified.checked)


def test_a_pair_panel_dealt_shares_judged_in_the_browser_is_analysed_not_void(
    tmp_path: Path, browser: Any, invoke: Any
) -> None:
    # Each reviewer names the two options on their first trial and judges only the 4 of 6
    # trials dealt to them; the panel's analysis counts each against that share.
    run = make_run(tmp_path, "pair", 6)
    with judge_server(run, "--panel", "alice,bob", "--per-judge", "4") as server:
        urls = read_all_links(server, 2)
        for name, url in urls.items():
            page = browser.new_page()
            page.goto(url)
            wait_for_trial(page, 1, 4)
            page.fill("input[name='nick1']", "fox")
            page.fill("input[name='nick2']", "owl")
            page.click("button[value='1']")
            for n in range(2, 5):
                wait_for_trial(page, n, 4)
                page.keyboard.press("1" if n % 2 else "2")
            page.wait_for_selector("#message")
            assert "All 4 trials judged" in page.inner_text("#message"), name
        code, _, err = server.finish()
    assert code == 0, err
    files = [run / f"picks-{name}.jsonl" for name in ("alice", "bob")]
    assert [len(picks_of(path)) for path in files] == [4, 4]
    result = invoke("analyze", run, *[a for path in files for a in ("--picks", path)])
    assert result.exit_code == 0, result.output
    report = artifacts.read_json(run / artifacts.REPORT, "report")
    assert report["verdict"] in ("distinguished", "not distinguished")
    assert sorted(report["per_judge"]) == ["alice", "bob"]
