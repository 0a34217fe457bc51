"""The HTML report says "This page fetches nothing": a response's markdown image is shown as
its words, and the page's Content-Security-Policy forbids every load, so opening the report in
Chromium sends no request to a server a model's text names."""

from __future__ import annotations

import http.server
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest

from blindtest.present.markup import render_text

from conftest import Invoke
from web_page import chromium

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "run"


class Counter(http.server.BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Counter.seen.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def pixel_server() -> Iterator[str]:
    Counter.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Counter)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_markdown_image_is_shown_as_its_alt_text_and_url() -> None:
    html = str(render_text("see ![a <b>](http://host/p.png?a=1&b=2)", plain=False))
    assert "<img" not in html
    assert "[image: a &lt;b&gt;](http://host/p.png?a=1&amp;b=2)" in html


def report_with_an_image(tmp_path: Path, invoke: Invoke, url: str) -> Path:
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    (run / "report.json").unlink()
    trials = run / "trials.jsonl"
    lines = trials.read_bytes().splitlines()
    first = orjson.loads(lines[0])
    first["options"][0] += f"\n\n![pixel]({url}/pixel.png)"
    lines[0] = orjson.dumps(first, option=orjson.OPT_SORT_KEYS)
    trials.write_bytes(b"\n".join(lines) + b"\n")
    page = tmp_path / "report.html"
    result = invoke("analyze", run, "--html", page, "--quiet")
    assert result.exit_code == 0, result.stderr
    return page


def test_opening_the_report_requests_nothing(
    tmp_path: Path, invoke: Invoke, pixel_server: str
) -> None:
    page_path = report_with_an_image(tmp_path, invoke, pixel_server)
    text = page_path.read_text(encoding="utf-8")
    assert f"[image: pixel]({pixel_server}/pixel.png)" in text
    # Were the escaping ever to fail, the page's policy still forbids the load: an <img> put
    # into the page by hand must not reach the server either.
    text = text.replace("</body>", f'<img src="{pixel_server}/injected.png"></body>')
    page_path.write_text(text, encoding="utf-8")
    with chromium() as browser:
        page = browser.new_page()
        blocked: list[str] = []
        page.on("console", lambda m: blocked.append(m.text))
        page.goto(page_path.as_uri(), wait_until="load")
        page.wait_for_load_state("networkidle")
        assert "[image: pixel]" in (page.text_content("body") or "")
    assert Counter.seen == []
    assert any("Content Security Policy" in line for line in blocked), blocked
