"""The judging page's server: aiohttp on 127.0.0.1 (``--host`` to share it, with a warning),
in a thread beside the driver, and ``WebJudge``, the ``Judge`` that waits for the page's
answers. The only module of the judging page that opens a socket.

Every path starts with a reviewer's random token; anything else, a wrong token included, is
403 with a body that says nothing more. The server serves the page, its own two static assets
and nothing from the run directory: never design.json, responses.jsonl or anyone's picks.
Responses forbid scripts from anywhere but the page's own asset (Content-Security-Policy), are
never cached, and send no referrer (the token stays in the address bar).
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import secrets
import socket
import sys
import threading
import webbrowser
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from aiohttp import web

from blindtest.errors import BadInput, Interrupted
from blindtest.judging.driver import (
    Answer,
    Judge,
    JudgeKind,
    JudgeSetup,
    JudgingResult,
    Stop,
    Turn,
)
from blindtest.judging.terminal.questions import closing_message, quit_message
from blindtest.judging.web import page
from blindtest.judging.web.reviewer import Refused, Reviewer
from blindtest.judgment import JudgeView, judge_nicknames

Echo = Callable[[str], None]

LOOPBACK = "127.0.0.1"
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Server": "blindtest",
}
FORBIDDEN = "403 forbidden\n"


def new_token() -> str:
    return secrets.token_urlsafe(18)


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: a free port), or ``BadInput``."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as err:
        raise BadInput(f"--host {host}: not an address to listen on ({err})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(64)
    except OSError as err:
        sock.close()
        raise BadInput(
            f"--port {port}: cannot listen on {host}:{port} ({err.strerror}); choose another "
            "port, or drop --port for a free one"
        ) from None
    sock.setblocking(False)
    return sock


def url_of(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/{token}/"


# --------------------------------------------------------------------------- the app


class Page:
    """The aiohttp application over a set of reviewers, each known by its token."""

    def __init__(self, reviewers: Sequence[Reviewer], *, plain: bool) -> None:
        self.reviewers = list(reviewers)
        self.plain = plain

    def reviewer(self, token: str) -> Reviewer | None:
        found = None
        for reviewer in self.reviewers:  # compare every token, in constant time each
            if hmac.compare_digest(reviewer.token.encode(), token.encode()):
                found = reviewer
        return found

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard], client_max_size=64 * 1024)
        app.router.add_get("/{token}/", self._show)
        app.router.add_get("/{token}/static/{name}", self._static)
        app.router.add_post("/{token}/pick", self._pick)
        app.router.add_post("/{token}/continue", self._continue)
        return app

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        token = request.match_info.get("token")
        if token is None or self.reviewer(token) is None:
            response: web.StreamResponse = web.Response(status=403, text=FORBIDDEN)
        else:
            try:
                response = await handler(request)
            except web.HTTPException as err:  # a wrong method or path under a good token
                response = web.Response(status=err.status, text=f"{err.status}\n")
        response.headers.update(SECURITY_HEADERS)
        return response

    def _base(self, reviewer: Reviewer) -> str:
        return f"/{reviewer.token}"

    def _of(self, request: web.Request) -> Reviewer:
        found = self.reviewer(request.match_info["token"])
        assert found is not None  # the guard let it through
        return found

    async def _static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in page.STATIC:
            return web.Response(status=404, text="404\n")
        return web.Response(
            body=page.static_asset(name), headers={"Content-Type": page.STATIC[name]}
        )

    async def _show(self, request: web.Request) -> web.Response:
        reviewer = self._of(request)
        screen = await asyncio.to_thread(reviewer.screen)
        return self._html(self._render(reviewer, screen.kind, screen))

    async def _pick(self, request: web.Request) -> web.Response:
        reviewer = self._of(request)
        form = {key: str(value) for key, value in (await request.post()).items()}
        taken = await asyncio.to_thread(reviewer.submit, form)
        if isinstance(taken, Refused):
            screen = await asyncio.to_thread(reviewer.screen, 0.0)
            if screen.kind == "trial":
                return self._html(
                    self._render(reviewer, "trial", screen, taken.message, dict(taken.form)),
                    status=422,
                )
        elif taken is not None:
            await asyncio.to_thread(reviewer.wait_past, taken)
            screen = await asyncio.to_thread(reviewer.screen, 0.0)
            if screen.kind == "done":  # answered here: the server stops after the last pick
                return self._html(self._render(reviewer, "done", screen))
        return self._see_page(reviewer)

    async def _continue(self, request: web.Request) -> web.Response:
        reviewer = self._of(request)
        await asyncio.to_thread(reviewer.resume)
        return self._see_page(reviewer)

    def _see_page(self, reviewer: Reviewer) -> web.Response:
        """303 to the reviewer's page: a reload after a pick does not send it again."""
        return web.Response(status=303, headers={"Location": f"{self._base(reviewer)}/"})

    def _html(self, body: str, status: int = 200) -> web.Response:
        return web.Response(text=body, status=status, content_type="text/html", charset="utf-8")

    def _render(
        self,
        reviewer: Reviewer,
        kind: str,
        screen: object,
        error: str = "",
        form: dict[str, str] | None = None,
    ) -> str:
        from blindtest.judging.web.reviewer import Screen

        assert isinstance(screen, Screen)
        base = self._base(reviewer)
        view = reviewer.view
        if kind == "done":
            assert screen.result is not None
            return page.message_page("Thank you", base, done_words(reviewer, screen.result))
        if kind == "waiting" or screen.turn is None:
            return page.message_page(
                "Not judging now",
                base,
                [
                    "No trial is waiting for you now. If bt-judge is still running, reload this "
                    "page; if it was stopped, run it again and open the link it prints."
                ],
            )
        turn = screen.turn
        if kind == "break":
            return page.message_page(
                "Time for a break",
                base,
                [
                    f"You have judged {screen.judged_now} trials in this sitting. Judgement "
                    f"gets worse after about {reviewer.session_cap} comparisons in a row: "
                    "consider stopping now and coming back later. Your picks are saved; this "
                    "link continues where you stopped while bt-judge runs.",
                ],
                button="Continue now",
            )
        return page.trial_page(
            view,
            turn.trial,
            page.Place(min(turn.judged + 1, reviewer.total), reviewer.total),
            base,
            plain=self.plain,
            nicknames=reviewer.nicknames if view.protocol == "pair" else None,
            error=error,
            form=form,
        )


def done_words(reviewer: Reviewer, result: JudgingResult) -> list[str]:
    """The end of a reviewer's sitting: no score, no feedback."""
    if result.status == "stopped":
        return [
            f"The session is complete after {result.judged} of {result.total} trials. Results "
            "are shown once the judging is closed and analysed."
        ]
    if result.status == "quit":
        return ["Judging was stopped. Your picks are saved; ask for a new link to continue."]
    return [
        f"All {reviewer.total} trials judged. Thank you: your picks are saved. Results are "
        "shown once the judging is closed and analysed."
    ]


# --------------------------------------------------------------------------- the thread


class ServerThread:
    """The app served from ``sock`` by an event loop in a daemon thread."""

    def __init__(self, app: web.Application, sock: socket.socket) -> None:
        self._app = app
        self._sock = sock
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="bt-judge-web", daemon=True)

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()
        if self._failed is not None:
            raise self._failed

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except BaseException as err:  # reported to the starting thread
            self._failed = err
            self._ready.set()
        finally:
            loop.close()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        runner = web.AppRunner(self._app, access_log=None, handle_signals=False)
        await runner.setup()
        try:
            await web.SockSite(runner, self._sock, shutdown_timeout=2.0).start()
            self._ready.set()
            await self._stop.wait()
        finally:
            await runner.cleanup()


# --------------------------------------------------------------------------- the judge


class WebJudge:
    """A person judging on the page: ``sitting`` serves it and prints the link, ``judge``
    waits for the page's answer to the trial the driver asks."""

    def __init__(
        self,
        view: JudgeView,
        judge_id: str,
        *,
        plain: bool,
        earlier_nicknames: tuple[str, str] | None = None,
        host: str = LOOPBACK,
        port: int = 0,
        open_browser: bool = True,
        session_cap: int = 30,
        resume_command: str = "the same command",
        echo: Echo | None = None,
        token: str | None = None,
    ) -> None:
        self.view = view
        self.judge_id = judge_id
        self.host = host
        self.port = port
        self.open_browser = open_browser
        self.plain = plain
        self.resume_command = resume_command
        self.echo: Echo = echo or _print
        self.reviewer = Reviewer(
            view,
            judge_id,
            token or new_token(),
            nicknames=earlier_nicknames,
            session_cap=session_cap,
        )
        self.url = ""

    @property
    def kind(self) -> JudgeKind:
        return WEB

    @contextmanager
    def sitting(self, progress: Callable[[], JudgingResult]) -> Iterator[None]:
        sock = listen(self.host, self.port)
        server = ServerThread(Page([self.reviewer], plain=self.plain).app(), sock)
        server.start()
        self.url = url_of(self.host, server.port, self.reviewer.token)
        if not is_loopback_host(self.host):
            self.echo(
                f"warning: serving on {self.host}, not 127.0.0.1: anyone on the network "
                "who has the link can judge as this reviewer"
            )
        self.echo(f"Judge {self.judge_id}: open {self.url}")
        self.echo("Leave this running until the page says all trials are judged; Ctrl-C stops.")
        if self.open_browser:
            webbrowser.open(self.url)
        try:
            yield
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted; {quit_message(self.view, progress())}") from None
        finally:
            self.reviewer.stop()
            server.stop()

    def judge(self, turn: Turn) -> Answer:
        pick = self.reviewer.ask(turn)
        return Stop() if pick is None else (pick,)

    def end(self, result: JudgingResult) -> None:
        self.reviewer.finish(result)

    def closing(self, result: JudgingResult, out: Path, analyze_command: str) -> str:
        return closing_message(self.view, result, analyze_command)


def _print(line: str) -> None:
    print(line, file=sys.stdout, flush=True)


def options_of(setup_options: Mapping[str, object]) -> dict[str, object]:
    """The web judge's options from ``JudgeSetup.options`` (the CLI's --host, --port, ...)."""
    known = ("host", "port", "open_browser", "session_cap", "echo")
    return {key: setup_options[key] for key in known if key in setup_options}


def _make(setup: JudgeSetup) -> Judge:
    return WebJudge(
        setup.run.view,
        setup.judge_id,
        plain=bool(setup.run.design["normalization"]["strip_formatting"]),
        earlier_nicknames=judge_nicknames(setup.earlier.picks, setup.judge_id),
        resume_command=setup.resume_command,
        **options_of(setup.options),  # type: ignore[arg-type]
    )


#: ``--judge web`` (or ``--web``): a person on the judging page; a panel's reviewers too.
WEB = JudgeKind("web", "human", _make)


def judge_kind(name: str) -> JudgeKind:
    return WEB
