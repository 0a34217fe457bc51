"""The judging page's links: the same reviewer's link works after ``bt-judge --web`` is
started again (the run keeps only the tokens' SHA-256, in RUN/web-links.jsonl, and the page
comes back on the same port when it is free); a wrong or old link gets a page that says what
to do; ``--host 0.0.0.0`` prints a link a reviewer can open, with the warning."""

from __future__ import annotations

import hashlib
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_judge_web import get, odd_positions, wait_for_trial
from test_judge_web_panel import read_all_links

from blindtest.errors import BadInput
from blindtest.judging.web.links import LINKS, LinkBook, picks_key, token_hash
from blindtest.judging.web.server import link_host, listen, listen_again
from blindtest.rundir import artifacts

from judge_runs import make_run, picks_of
from web_page import SIZES, chromium, judge_server, page_at, screenshot


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.fixture(params=sorted(SIZES))
def sized(request: pytest.FixtureRequest, browser: Any) -> Iterator[tuple[str, Any]]:
    with page_at(browser, request.param) as named:
        yield named


def _port(url: str) -> int:
    return int(url.split("/")[2].rsplit(":", 1)[1])


def _line_after(server: Any, start: str) -> str:
    """The line bt-judge printed after the one starting with ``start``."""
    while not any(line.startswith(start) for line in server.lines):
        server.lines.append(server.proc.stdout.readline().rstrip("\n"))
    return str(server.proc.stdout.readline().rstrip("\n"))


def test_the_same_link_works_after_a_restart(tmp_path: Path, sized: tuple[str, Any]) -> None:
    size, page = sized
    run = make_run(tmp_path, trials=4)
    odd = odd_positions(run)
    with judge_server(run, "--judge-id", "zoe") as first:
        page.goto(first.url)
        for n in (1, 2):
            wait_for_trial(page, n, 4)
            page.keyboard.press(str(odd[n - 1]))
        wait_for_trial(page, 3, 4)
        code, _, _ = first.interrupt()
    assert code == 130
    kept = (run / LINKS).read_text("utf-8")
    assert first.token not in kept  # only its hash
    assert token_hash(first.token) in kept
    with judge_server(run, "--judge-id", "zoe") as second:
        assert _port(second.url) == _port(first.url)  # the same port, free again
        assert second.token != first.token
        assert "The links given before for this judge and picks file work too." in second.lines
        page.goto(first.url)  # the link the reviewer already has
        wait_for_trial(page, 3, 4)
        screenshot(page, f"judge-restarted-same-link-{size}")
        assert get(second.url)[0] == 200  # the new link opens the page too
        for n in (3, 4):
            wait_for_trial(page, n, 4)
            page.keyboard.press(str(odd[n - 1]))
        page.wait_for_selector("#message")
        assert page.url == first.url  # the reviewer's link stays the one in the address bar
        code, _, err = second.finish()
    assert code == 0, err
    assert [p["pick"] for p in picks_of(run / artifacts.PICKS)] == odd
    for line in (run / LINKS).read_text("utf-8").splitlines():
        artifacts.validate(json.loads(line), "web_links", LINKS)


def test_an_old_or_wrong_link_gets_a_page_that_says_what_to_do(
    tmp_path: Path, sized: tuple[str, Any]
) -> None:
    size, page = sized
    run = make_run(tmp_path, trials=2)
    with judge_server(run, "--judge-id", "amy", "--out", str(run / "picks-amy.jsonl")) as amy:
        old = amy.url
        amy.interrupt()
    (run / LINKS).unlink()  # every earlier link retired
    with judge_server(run, "--judge-id", "amy", "--out", str(run / "picks-amy.jsonl")) as again:
        wrong = again.origin + "/" + old.split("/")[3] + "/"
        response = page.goto(wrong)
        assert response.status == 403
        words = page.inner_text("#wrong-link")
        assert "This link does not open a judging page" in words
        assert "ask the person running bt-judge --web for your link" in words
        screenshot(page, f"judge-wrong-link-{size}")
        again.interrupt()


def test_a_link_is_for_one_reviewer_and_one_picks_file(tmp_path: Path) -> None:
    run = make_run(tmp_path, trials=2)
    with judge_server(run, "--judge-id", "ben", "--out", str(run / "picks-ben.jsonl")) as ben:
        ben.interrupt()
    with judge_server(run, "--judge-id", "cy", "--out", str(run / "picks-cy.jsonl")) as cy:
        assert get(f"{cy.origin}/{ben.token}/")[0] == 403  # ben's link opens nothing of cy's
        assert get(cy.url)[0] == 200
        cy.interrupt()


def test_a_panels_links_work_after_a_restart(tmp_path: Path) -> None:
    run = make_run(tmp_path, trials=4)
    with judge_server(run, "--panel", "ann,bo") as first:
        before = read_all_links(first, 2)
        for url in before.values():  # each reviewer's sitting is under way
            assert "trial 1 of 4" in get(url)[1]
        first.interrupt()
    with judge_server(run, "--panel", "ann,bo") as second:
        after = read_all_links(second, 2)
        assert _line_after(second, "Every trial gets") == (
            "Links given before to these reviewers work too."
        )
        for name in ("ann", "bo"):
            assert _port(after[name]) == _port(before[name])
            status, body = get(before[name])
            assert status == 200
            assert "trial 1 of 4" in body
        status, _ = get(f"{second.origin}/{before['ann'].split('/')[3]}x/")
        assert status == 403
        second.interrupt()
    text = (run / LINKS).read_text("utf-8")
    assert all(url.split("/")[3] not in text for url in (*before.values(), *after.values()))


def test_the_link_file_keeps_hashes_skips_a_torn_line_and_refuses_a_broken_one(
    tmp_path: Path,
) -> None:
    book = LinkBook(tmp_path)
    assert book.links == ()
    key = picks_key(tmp_path, tmp_path / "picks.jsonl")
    assert key == "picks.jsonl"
    assert picks_key(tmp_path, tmp_path.parent / "elsewhere.jsonl").startswith("/")
    book.record("dee", key, "secret-token", 8123)
    book.record("eve", key, "other-token", 8124)
    text = (tmp_path / LINKS).read_text("utf-8")
    assert "secret-token" not in text
    assert hashlib.sha256(b"secret-token").hexdigest() in text
    again = LinkBook(tmp_path)
    assert again.hashes("dee", key) == (token_hash("secret-token"),)
    assert again.hashes("dee", "picks-dee.jsonl") == ()
    assert again.last_port([("dee", key)]) == 8123
    assert again.last_port([("dee", key), ("eve", key)]) == 8124
    assert again.last_port([("fay", key)]) is None
    with (tmp_path / LINKS).open("a", encoding="utf-8") as f:
        f.write('{"schema": "blindtest/web_links@1", "judge": "d')  # a crash mid-write
    assert len(LinkBook(tmp_path).links) == 2
    with (tmp_path / LINKS).open("a", encoding="utf-8") as f:
        f.write('\n{"schema": "blindtest/web_links@1", "judge": "x", "picks": "p", "sha256": "raw"')
        f.write(', "port": 1}\n')
    with pytest.raises(BadInput, match="not a JSON line; delete the file"):
        LinkBook(tmp_path)


def test_a_taken_port_gives_a_free_one_and_says_the_old_links_do_not_work() -> None:
    holder = listen("127.0.0.1", 0)
    try:
        taken = holder.getsockname()[1]
        sock, note = listen_again("127.0.0.1", 0, taken)
        try:
            assert sock.getsockname()[1] != taken
            assert f"port {taken}, where the links given before pointed, is in use" in note
        finally:
            sock.close()
    finally:
        holder.close()
    free = listen("127.0.0.1", 0)
    port = free.getsockname()[1]
    free.close()
    sock, note = listen_again("127.0.0.1", 0, port)
    assert (sock.getsockname()[1], note) == (port, "")
    sock.close()


def test_host_0000_prints_a_link_a_reviewer_can_open_with_the_warning(tmp_path: Path) -> None:
    run = make_run(tmp_path, trials=2)
    with judge_server(run, "--judge-id", "ivy", "--host", "0.0.0.0") as server:
        host = server.url.split("/")[2].rsplit(":", 1)[0]
        assert host != "0.0.0.0"
        assert host == link_host("0.0.0.0")
        assert server.lines[:2] == [
            "warning: serving on 0.0.0.0 (every address of this machine), not 127.0.0.1:",
            "  anyone on the network who has the link can judge as that reviewer",
        ]  # each line fits 80 columns
        status, body = get(server.url)  # the printed link opens the page
        assert status == 200
        assert "trial 1 of 2" in body
        server.interrupt()


def test_the_machine_address_is_one_this_machine_listens_on() -> None:
    address = link_host("0.0.0.0")
    assert address not in ("0.0.0.0", "")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((address, 0))  # an address of this machine, not a guess
    assert link_host("127.0.0.1") == "127.0.0.1"
    assert link_host("192.0.2.7") == "192.0.2.7"
