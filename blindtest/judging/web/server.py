"""The judging page's server: aiohttp on 127.0.0.1 (``--host`` to share it, with a warning),
in a thread beside the driver, and ``WebJudge``, the ``Judge`` that waits for the page's
answers. The only module of the judging page that opens a socket.

Every path starts with a reviewer's random token; anything else, a wrong or retired token
included, is 403 with a page that says what to do and nothing more. Tokens live in memory;
the run keeps only their SHA-256 (``RUN/web-links.jsonl``, :mod:`.links`), so a restart
accepts the links it gave before and listens on the same port when it is free. The server
serves the page, its own two static assets and nothing from the run directory: never
design.json, responses.jsonl or anyone's picks. Responses forbid scripts from anywhere but the
page's own asset (Content-Security-Policy), are never cached, and send no referrer (the token
stays in the address bar). Once the last pick is in, the page stays up for the end screen
until the operator presses Enter (or stdin ends and the end screen has been fetched).
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import secrets
import socket
import sys
import threading
import time
import webbrowser
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from aiohttp import web

from blindtest import reportfmt
from blindtest.errors import BadInput, Interrupted, option
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
from blindtest.judging.web.links import LinkBook, picks_key
from blindtest.judging.web.reviewer import Refused, Reviewer, Screen
from blindtest.model.picks import JudgeView, Pick, judge_nicknames
from blindtest.model.protocols import PROTOCOLS

Echo = Callable[[str], None]

LOOPBACK = "127.0.0.1"
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Server": "blindtest",
}
#: How long, at most, the page stays up after the last pick when nobody can press Enter
#: (stdin closed): long enough for the end screen and its stylesheet to be fetched.
END_WAIT = 15.0
#: Where a link's address comes from when the page listens on every interface: the address
#: this machine would send from to a documentation address (no packet is sent).
_PROBE = ("192.0.2.1", 9)


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
        raise BadInput(f"{option('host', host)}: not an address to listen on ({err})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(64)
    except OSError as err:
        sock.close()
        raise BadInput(
            f"{option('port', port)}: cannot listen on {host}:{port} ({err.strerror}); choose "
            f"another port, or drop {option('port')} for a free one"
        ) from None
    sock.setblocking(False)
    return sock


def listen_again(
    host: str, port: int, remembered: int | None, *, given: str = "the links given before"
) -> tuple[socket.socket, str]:
    """A listening socket: on ``port`` when one is asked for, else on ``remembered`` (the port
    earlier links point at) when it is free, else on a free port. Returns the socket and a
    note for the operator when ``remembered`` was taken ("" otherwise)."""
    if port or not remembered:
        return listen(host, port), ""
    try:
        return listen(host, remembered), ""
    except BadInput:
        note = (
            f"note: port {remembered}, where {given} pointed, is in use: those links do not "
            "work this time; send the new one (or stop what holds the port and start again)"
        )
        return listen(host, 0), note


def link_host(host: str) -> str:
    """The address a link names: ``host``, or this machine's address on the network when the
    page listens on every interface (0.0.0.0, ::), which no browser can open."""
    if host not in ("0.0.0.0", "::", ""):
        return host
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(_PROBE)
            address = str(probe.getsockname()[0])
        if not ipaddress.ip_address(address).is_unspecified:
            return address
    except OSError:
        pass
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return socket.gethostname()


def url_of(host: str, port: int, token: str) -> str:
    shown = link_host(host)
    shown = f"[{shown}]" if ":" in shown else shown
    return f"http://{shown}:{port}/{token}/"


def network_warning(host: str, who: str) -> str:
    """The warning printed when the page is served beyond this machine."""
    where = f"{host} (every address of this machine)" if host in ("0.0.0.0", "::") else host
    return (
        f"warning: serving on {where}, not 127.0.0.1:\n"
        f"  anyone on the network who has {who} can judge as that reviewer"
    )


# --------------------------------------------------------------------------- the app


class Page:
    """The aiohttp application over a set of reviewers, each known by its token."""

    def __init__(self, reviewers: Sequence[Reviewer], *, plain: bool) -> None:
        self.reviewers = list(reviewers)
        self.plain = plain

    def reviewer(self, token: str) -> Reviewer | None:
        found = None
        for reviewer in self.reviewers:  # ask every reviewer: each compares in constant time
            if reviewer.opens_with(token):
                found = reviewer
        return found

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._guard], client_max_size=64 * 1024)
        app.router.add_get("/{token}/", self._show)
        app.router.add_get("/{token}/history", self._history)
        app.router.add_get("/{token}/change/{trial}", self._change)
        app.router.add_get("/{token}/static/{name}", self._static)
        app.router.add_post("/{token}/pick", self._pick)
        app.router.add_post("/{token}/undo", self._undo)
        app.router.add_post("/{token}/skip", self._skip)
        app.router.add_post("/{token}/continue", self._continue)
        return app

    @web.middleware
    async def _guard(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        token = request.match_info.get("token")
        if request.path == "/favicon.ico":  # asked by browsers of every page: no icon here
            empty = web.Response(status=204)
            empty.headers.update(SECURITY_HEADERS)
            return empty
        if token is None or self.reviewer(token) is None:
            response: web.StreamResponse = self._html(page.wrong_link_page(), status=403)
            response.headers.update(SECURITY_HEADERS)
            response.headers["Content-Security-Policy"] = page.WRONG_LINK_CSP
            return response
        else:
            try:
                response = await handler(request)
            except web.HTTPException as err:  # a wrong method or path under a good token
                response = web.Response(status=err.status, text=f"{err.status}\n")
        response.headers.update(SECURITY_HEADERS)
        return response

    def _base(self, request: web.Request) -> str:
        """The path the page's forms and assets use: the token this request came with, so a
        link given before stays the link in the reviewer's address bar."""
        return f"/{request.match_info['token']}"

    def _of(self, request: web.Request) -> Reviewer:
        found = self.reviewer(request.match_info["token"])
        assert found is not None  # the guard let it through
        return found

    async def _static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in page.STATIC:
            return web.Response(status=404, text="404\n")
        reviewer = self._of(request)
        if name == "page.css" and reviewer.ended:
            reviewer.end_served.set()
        return web.Response(
            body=page.static_asset(name), headers={"Content-Type": page.STATIC[name]}
        )

    async def _show(self, request: web.Request) -> web.Response:
        reviewer = self._of(request)
        screen = await asyncio.to_thread(reviewer.screen)
        return self._html(self._render(reviewer, self._base(request), screen.kind, screen))

    async def _history(self, request: web.Request) -> web.Response:
        """The reviewer's picks so far, each to be changed (only what the reviewer answered:
        nothing about sides)."""
        reviewer = self._of(request)
        words = await asyncio.to_thread(reviewer.words)
        if words is None:
            return self._see_page(request)
        judged = len(words)
        place = page.Place(judged, reviewer.total, judged, reviewer.total - judged)
        return self._html(page.history_page(reviewer.view, words, place, self._base(request)))

    async def _change(self, request: web.Request) -> web.Response:
        """One trial judged before, opened from the history with its answer filled in."""
        reviewer = self._of(request)
        words = await asyncio.to_thread(reviewer.words)
        number = request.match_info["trial"]
        word = next((w for w in words or () if str(w.trial) == number), None)
        if word is None:
            return self._see_page(request)
        return self._html(self._changing(reviewer, self._base(request), word))

    def _changing(
        self,
        reviewer: Reviewer,
        base: str,
        word: Pick,
        refused: Refused | None = None,
    ) -> str:
        view = reviewer.view
        named = PROTOCOLS[view.protocol].pick_kind == "nickname"
        judged = len(reviewer.words(0.0) or ())
        return page.trial_page(
            view,
            view.trials[word.trial - 1],
            page.Place(judged, reviewer.total, judged, reviewer.total - judged),
            base,
            plain=self.plain,
            nicknames=reviewer.nicknames if named else None,
            error=refused.message if refused is not None else "",
            error_field=refused.field if refused is not None else None,
            form=refused.form if refused is not None else None,
            change=word,
        )

    async def _pick(self, request: web.Request) -> web.Response:
        reviewer = self._of(request)
        form = {key: str(value) for key, value in (await request.post()).items()}
        pick_id = form.get("pick_id", "")
        if pick_id and reviewer.recorded(pick_id):  # sent again, its reply lost
            return self._answered(request, "saved")
        taken = await asyncio.to_thread(reviewer.submit, form)
        change = form.get("change", "")
        if isinstance(taken, Refused):
            if _wants_json(request):
                return _json(
                    {"status": "refused", "message": taken.message, "field": taken.field}, 422
                )
            return await self._refused(request, reviewer, taken, change)
        if taken is None:
            return self._answered(request, "stale")
        await asyncio.to_thread(reviewer.wait_past, taken)
        return self._answered(request, "changed" if change else "saved")

    async def _refused(
        self, request: web.Request, reviewer: Reviewer, taken: Refused, change: str
    ) -> web.Response:
        """The form again, with what is missing said next to it (a page without scripts)."""
        base = self._base(request)
        words = await asyncio.to_thread(reviewer.words, 0.0)
        word = next((w for w in words or () if str(w.trial) == change), None)
        if word is not None:
            return self._html(self._changing(reviewer, base, word, taken), status=422)
        screen = await asyncio.to_thread(reviewer.screen, 0.0)
        if screen.kind != "trial":
            return self._see_page(request)
        return self._html(
            self._render(reviewer, base, "trial", screen, taken),
            status=422,
        )

    async def _undo(self, request: web.Request) -> web.Response:
        reviewer = self._of(request)
        form = {key: str(value) for key, value in (await request.post()).items()}
        taken = await asyncio.to_thread(reviewer.take_back, form)
        if taken is None:
            return self._answered(request, "stale")
        await asyncio.to_thread(reviewer.wait_past, taken)
        return self._answered(request, "taken back")

    async def _skip(self, request: web.Request) -> web.Response:
        reviewer = self._of(request)
        form = {key: str(value) for key, value in (await request.post()).items()}
        taken = await asyncio.to_thread(reviewer.skip, form)
        if taken is None:
            return self._answered(request, "stale")
        await asyncio.to_thread(reviewer.wait_past, taken)
        return self._answered(request, "skipped")

    def _answered(self, request: web.Request, status: str) -> web.Response:
        """What an answer did: for the page's script, in JSON (it then loads the page and
        says it); for a form sent without scripts, 303 to the page."""
        if _wants_json(request):
            return _json({"status": status})
        return self._see_page(request)

    async def _continue(self, request: web.Request) -> web.Response:
        reviewer = self._of(request)
        await asyncio.to_thread(reviewer.resume)
        return self._answered(request, "continued")

    def _see_page(self, request: web.Request) -> web.Response:
        """303 to the reviewer's page: a reload after a pick does not send it again."""
        return web.Response(status=303, headers={"Location": f"{self._base(request)}/"})

    def _html(self, body: str, status: int = 200) -> web.Response:
        return web.Response(text=body, status=status, content_type="text/html", charset="utf-8")

    def _render(
        self,
        reviewer: Reviewer,
        base: str,
        kind: str,
        screen: Screen,
        refused: Refused | None = None,
    ) -> str:
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
        left = max(0, reviewer.total - turn.judged)
        if kind == "break":
            return page.message_page(
                "Time for a break",
                base,
                [
                    f"You have judged {reportfmt.count(screen.judged_now, 'trial')} in this "
                    f"sitting; {left} of your {reviewer.total} are left. Judgement "
                    f"gets worse after about {reviewer.session_cap} comparisons in a row: "
                    "consider stopping now and coming back later. Your picks are saved; this "
                    "link continues where you stopped while bt-judge runs.",
                ],
                button="Continue now",
                history=len(turn.words),
            )
        named = PROTOCOLS[view.protocol].pick_kind == "nickname"
        again = turn.correcting is not None  # counted already: shown again to be judged anew
        number = min(turn.judged + (0 if again else 1), reviewer.total)
        return page.trial_page(
            view,
            turn.trial,
            page.Place(number, reviewer.total, turn.judged, left),
            base,
            plain=self.plain,
            nicknames=reviewer.nicknames if named else None,
            error=refused.message if refused is not None else "",
            error_field=refused.field if refused is not None else None,
            form=refused.form if refused is not None else None,
            undo=turn.undoable.trial if turn.undoable is not None else None,
            correcting=turn.correcting,
            mark=screen.mark,
            history=len(turn.words),
            skipped=turn.skipped,
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
    judged = (
        "The trial is judged." if reviewer.total == 1 else f"All {reviewer.total} trials judged."
    )
    return [
        f"{judged} Thank you: your picks are saved. Results are shown once the judging is "
        "closed and analysed."
    ]


def _wants_json(request: web.Request) -> bool:
    """The page's script asks for JSON; a form sent without scripts does not."""
    return "application/json" in request.headers.get("Accept", "")


def _json(body: Mapping[str, object], status: int = 200) -> web.Response:
    return web.json_response(dict(body), status=status)


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
        # The shutdown timeout is the runner's (aiohttp 3.9+; the site's own is deprecated).
        runner = web.AppRunner(
            self._app, access_log=None, handle_signals=False, shutdown_timeout=2.0
        )
        await runner.setup()
        try:
            await web.SockSite(runner, self._sock).start()
            self._ready.set()
            await self._stop.wait()
        finally:
            await runner.cleanup()


# --------------------------------------------------------------------------- the judge


class WebJudge:
    """A person judging on the page: ``sitting`` serves it and prints the link, ``judge``
    waits for the page's answer to the trial the driver asks. With ``run_dir`` and ``picks``
    the links given before for the same picks file open the page too (``RUN/web-links.jsonl``)
    and the page listens on their port when it is free."""

    def __init__(
        self,
        view: JudgeView,
        judge_id: str,
        *,
        plain: bool,
        earlier_nicknames: tuple[str, str] | None = None,
        pick_ids: Iterable[str] = (),
        host: str = LOOPBACK,
        port: int = 0,
        open_browser: bool = True,
        session_cap: int = 30,
        resume_command: str = "the same command",
        echo: Echo | None = None,
        token: str | None = None,
        run_dir: Path | None = None,
        picks: Path | None = None,
        total: int | None = None,
    ) -> None:
        self.view = view
        self.judge_id = judge_id
        self.host = host
        self.port = port
        self.open_browser = open_browser
        self.plain = plain
        self.resume_command = resume_command
        self.echo: Echo = echo or _print
        self.book = LinkBook(run_dir) if run_dir is not None else None
        self.seat = (judge_id, picks_key(run_dir, picks)) if run_dir and picks else None
        earlier = self.book.hashes(*self.seat) if self.book and self.seat else ()
        self.reviewer = Reviewer(
            view,
            judge_id,
            token or new_token(),
            nicknames=earlier_nicknames,
            session_cap=session_cap,
            earlier_links=earlier,
            pick_ids=pick_ids,
            total=total,
        )
        self.url = ""

    @property
    def kind(self) -> JudgeKind:
        return WEB

    @contextmanager
    def sitting(self, progress: Callable[[], JudgingResult]) -> Iterator[None]:
        remembered = self.book.last_port([self.seat]) if self.book and self.seat else None
        sock, note = listen_again(self.host, self.port, remembered, given="the link given before")
        server = ServerThread(Page([self.reviewer], plain=self.plain).app(), sock)
        server.start()
        self.url = url_of(self.host, server.port, self.reviewer.token)
        if self.book is not None and self.seat is not None:
            self.book.record(*self.seat, self.reviewer.token, server.port)
        if not is_loopback_host(self.host):
            self.echo(network_warning(self.host, "the link"))
        if note:
            self.echo(note)
        if len(self.reviewer.token_hashes) > 1 and not note:
            self.echo("The links given before for this judge and picks file work too.")
        self.echo(f"Judge {self.judge_id}: open {self.url}")
        self.echo("Leave this running until the page says all trials are judged; Ctrl-C stops.")
        if self.open_browser:
            webbrowser.open(self.url)
        try:
            yield
            if self.reviewer.ended and self.reviewer.asked:
                hold_open([self.reviewer], self.echo)
        except KeyboardInterrupt:
            raise Interrupted(f"interrupted; {quit_message(self.view, progress())}") from None
        finally:
            self.reviewer.stop()
            server.stop()

    def judge(self, turn: Turn) -> Answer:
        pick = self.reviewer.ask(turn)
        if pick is None:
            return Stop()
        return (pick,) if isinstance(pick, Pick) else pick

    def end(self, result: JudgingResult) -> None:
        self.reviewer.finish(result)

    def closing(self, result: JudgingResult, out: Path, analyze_command: str) -> str:
        return closing_message(self.view, result, analyze_command)


# --------------------------------------------------------------------------- the end screen


class OperatorKeys:
    """Enter on the terminal bt-judge runs in, read by a daemon thread: ``pressed`` once a
    line is read, ``ended`` when there is nothing to read (stdin closed, not a terminal we may
    read from: a background job reading its terminal would be stopped by the shell)."""

    def __init__(self) -> None:
        self.pressed = threading.Event()
        self.ended = threading.Event()
        stream = sys.stdin
        if stream is None or stream.closed or not _may_read(stream):
            self.ended.set()
            return
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: object) -> None:
        line = ""
        try:
            line = stream.readline()  # type: ignore[attr-defined]
        except (OSError, ValueError, RuntimeError, NotImplementedError):
            pass  # closed, or a notebook's stdin that cannot be read: nobody can press Enter
        finally:
            (self.pressed if line else self.ended).set()


def _may_read(stream: object) -> bool:
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return True  # an in-memory stream (a test's runner): reading it never blocks a job
    if not os.isatty(fd):
        return True
    try:
        return os.tcgetpgrp(fd) == os.getpgrp()  # in the foreground of its terminal
    except OSError:
        return False


def hold_open(reviewers: Sequence[Reviewer], echo: Echo) -> None:
    """After the last pick: keep serving the end screen (it is styled and can be reloaded)
    until the operator presses Enter or Ctrl-C; when nobody can (stdin closed), until each
    reviewer who judged here has been served the end screen's stylesheet, at most
    ``END_WAIT`` seconds. Every pick is saved before this is called."""
    keys = OperatorKeys()
    if not keys.ended.is_set():
        echo("All picks are saved. The page shows its end screen: press Enter here to close it.")
    waiting = [r for r in reviewers if r.asked]
    deadline: float | None = None
    try:
        while not keys.pressed.wait(0.2):  # short waits: Ctrl-C reaches the main thread
            if keys.ended.is_set():
                deadline = deadline or time.monotonic() + END_WAIT
                if all(r.end_served.is_set() for r in waiting) or time.monotonic() > deadline:
                    return
    except KeyboardInterrupt:
        return


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
        pick_ids=setup.earlier.pick_ids_of(setup.judge_id),
        resume_command=setup.resume_command,
        run_dir=setup.run.run_dir,
        picks=setup.earlier.path,
        total=len(setup.share) if setup.share is not None else None,
        **options_of(setup.options),  # type: ignore[arg-type]
    )


#: ``--judge web`` (or ``--web``): a person on the judging page; a panel's reviewers too.
WEB = JudgeKind("web", "human", _make)


def judge_kind(name: str) -> JudgeKind:
    return WEB
