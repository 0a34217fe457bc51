"""The simulator's server: ``POST /v1/chat/completions``, ``GET /v1/models`` (and llama.cpp's
``GET /props``, with a context) on 127.0.0.1 for the simulated models, faults applied per
request, requests and slots counted, plus
``GET /_sim/stats`` and ``POST /_sim/reset`` for a benchmark in another process. Run in
process (:class:`Simulator`, or :func:`running` from a thread of its own).

It must never bind anything but 127.0.0.1, open an outgoing connection, or log a key.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import hashlib
import socket
import struct
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from types import TracebackType
from typing import Any

import orjson
from aiohttp import web

from blindtest.simulator.batches import BatchStore
from blindtest.simulator.faults import (
    FAULTS,
    GRAMMAR_FAILED_BODY,
    HTML_PAGE,
    Fault,
    FaultKind,
    FaultMix,
    error_body,
)
from blindtest.simulator.judging import JUDGE_MODELS, judge_text
from blindtest.simulator.text import DIRECTIVE, WORD, compose, seeded_random

HOST = "127.0.0.1"
MODELS = ("sim-large", "sim-small", "sim-launder")
#: Every model served: the three writers and the judges (:mod:`blindtest.simulator.judging`).
SERVED = (*MODELS, *JUDGE_MODELS)


@dataclass(slots=True)
class SimulatorConfig:
    """Server-wide behaviour; mutable, so a test can change it while the server runs.

    ``latency``: seconds before every completion. ``api_key``: when set, requests must carry
    ``Authorization: Bearer <api_key>``. ``capacity``: answer 429 when more than this many
    requests for one model are in flight. ``mix``: random faults. ``serve_as``: play a
    single-model server (llama.cpp, a one-model vLLM): any model name is accepted and answered
    by this model, whose name the answer's ``model`` field carries. ``deterministic``: ignore
    ``temperature`` (answer as at 0), as some servers do, so a prompt always gets one text;
    ``deterministic_models``: the same for these models only (one side served by such a server,
    the other sampling). ``canned_models``: answer these models' every prompt with
    ``canned_text``, as a gateway returning a refusal or an error sentence does.
    ``batch_delay``, ``batch_fail_every``, ``batch_expire_next``: the Batch API's processing
    time, its partial failures and expiring batches (:mod:`blindtest.simulator.batches`).
    ``refuse_response_format``: answer a request with ``response_format`` by a 400 naming it,
    as servers without structured output do; ``grammar_fails``: by llama.cpp's 400 when it
    cannot build the grammar, which names no field. ``fail_after``: answer the first N chat
    requests (since the last reset) as usual, then every later one with the fault named
    ``fail_with`` (a key revoked mid-run: "401"; a server that hangs: "hang"). ``hold``: while
    True, completions wait before their answer is written (a test holds a run mid-way, does
    what it must, and lets it go on, with no clock). ``context``: see the field.
    """

    latency: float = 0.0
    api_key: str | None = None
    capacity: int | None = None
    mix: FaultMix | None = None
    serve_as: str | None = None
    deterministic: bool = False
    deterministic_models: frozenset[str] = frozenset()
    canned_models: frozenset[str] = frozenset()
    canned_text: str = "I cannot help with that."
    batch_delay: float = 0.0
    batch_fail_every: int | None = None
    batch_expire_next: int = 0
    refuse_response_format: bool = False
    grammar_fails: bool = False
    fail_after: int | None = None
    fail_with: str = "401"
    hold: bool = False
    #: The context every model has, in the simulator's tokens (words + 3 per message):
    #: reported as vLLM does (``max_model_len`` in ``GET /v1/models``) and as llama.cpp does
    #: (``GET /props``), and a longer prompt is answered by vLLM's 400. None: not reported,
    #: not enforced (as OpenAI's API, which reports none).
    context: int | None = None


@dataclass(slots=True)
class SlotCount:
    """Requests seen for one slot (model, seed, messages), and answers whose bodies were
    written in full (to the connection: what a client still there receives)."""

    model: str
    seed: int | None
    messages_sha256: str
    received: int = 0
    answered: int = 0
    after_answer: int = 0


@dataclass(frozen=True, slots=True)
class ReceivedRequest:
    """A chat-completions request as it arrived (headers lower-cased, ``time.monotonic()``)."""

    headers: Mapping[str, str]
    body: bytes
    at: float

    def json(self) -> Any:
        return orjson.loads(self.body)


def _json(
    payload: bytes, status: int = 200, headers: Mapping[str, str] | None = None
) -> web.Response:
    return web.Response(
        body=payload, status=status, content_type="application/json", headers=headers
    )


def _reset_connection(request: web.Request) -> None:
    """Close with RST (SO_LINGER 0), as a crashed upstream or a killed proxy would."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def _gone(request: web.Request) -> bool:
    """Whether the client has closed the connection."""
    transport = request.transport
    return transport is None or transport.is_closing()


async def _wait_until(request: web.Request, until: float, *, watch: bool) -> None:
    """Sleep until ``until`` (loop time); ``watch``: a slow answer, which ends early when the
    client leaves (no handler outlives its client)."""
    loop = asyncio.get_running_loop()
    if not watch:
        await asyncio.sleep(max(0.0, until - loop.time()))
        return
    while (left := until - loop.time()) > 0 and not _gone(request):
        await asyncio.sleep(min(left, 0.05))


def _mask(key: str) -> str:
    return f"{key[:3]}***{key[-2:]}" if len(key) > 8 else "***"


def _check_body(body: Any) -> tuple[str, str | None] | None:
    """An OpenAI-style 400 (message, param) for a malformed request body, or None."""
    if not isinstance(body, dict):
        return "The request body must be a JSON object.", None
    if not isinstance(body.get("model"), str):
        return "you must provide a model parameter", "model"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array.", "messages"
    for i, m in enumerate(messages):
        ok = isinstance(m, dict) and isinstance(m.get("role"), str)
        if not ok or not isinstance(m.get("content"), (str, list)):
            return f"Invalid message at messages[{i}].", f"messages[{i}]"
    if body.get("stream"):
        return "The simulator does not stream; send stream: false.", "stream"
    return _check_numbers(body)


def _check_numbers(body: dict[str, Any]) -> tuple[str, str | None] | None:
    for name, lo, hi in (("temperature", 0.0, 2.0), ("top_p", 0.0, 1.0)):
        value = body.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"Invalid type for '{name}': expected a number.", name
        if not lo <= value <= hi:
            return f"Invalid '{name}': must be between {lo:g} and {hi:g}, got {value}.", name
    for name in ("max_tokens", "max_completion_tokens", "seed", "n"):
        value = body.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            return f"Invalid type for '{name}': expected an integer.", name
    return None


class Simulator:
    """The server. ``async with Simulator(config) as sim:`` serves on ``sim.base_url``.

    Faults for a request come from, in order: the ``x-sim-fault: NAME`` header; a
    ``[sim:NAME]`` or ``[sim:NAME*N]`` directive in a user message (every request, or the first
    N requests, of that slot); the queue filled by :meth:`inject`; the ``capacity`` limit; the
    random ``mix``. Auth (401) and unknown models (404) come before all of them.
    """

    def __init__(self, config: SimulatorConfig | None = None, *, port: int = 0) -> None:
        self.config = config if config is not None else SimulatorConfig()
        self.requests: list[ReceivedRequest] = []
        self.slots: dict[str, SlotCount] = {}
        self.in_flight: dict[str, int] = {}
        self.max_in_flight: dict[str, int] = {}
        self._port = port
        self._queue: list[tuple[Fault, str | None]] = []
        self._lock = threading.Lock()  # inject() may be called from the test's thread
        self._counter = 0
        self._runner: web.AppRunner | None = None
        self._bound: int | None = None
        self.batch_store = BatchStore()

    # lifecycle --------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._bound is None:
            raise RuntimeError("the simulator is not running")
        return self._bound

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what a client takes as its base URL."""
        return f"http://{HOST}:{self.port}/v1"

    async def start(self) -> str:
        """Bind 127.0.0.1 (``port`` 0: any free port), serve, and return the base URL."""
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/props", self._props)
        app.router.add_post("/v1/files", self._guarded(self.batch_store.upload))
        app.router.add_get("/v1/files/{file_id}/content", self._guarded(self.batch_store.content))
        app.router.add_post("/v1/batches", self._guarded(self._create_batch))
        app.router.add_get("/v1/batches", self._guarded(self._recent_batches))
        app.router.add_get("/v1/batches/{batch_id}", self._guarded(self._retrieve_batch))
        app.router.add_get("/_sim/stats", self._stats)
        app.router.add_post("/_sim/reset", self._reset)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((HOST, self._port))
            sock.listen(512)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        # No access log: it would print every request, and nothing here should ever log a key.
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        await web.SockSite(self._runner, sock).start()
        self._bound = sock.getsockname()[1]
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
            # Closing a transport finishes on a later loop iteration; give it those, so that a
            # caller that closes its loop next leaves no socket to the garbage collector.
            for _ in range(3):
                await asyncio.sleep(0)

    async def __aenter__(self) -> Simulator:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # controls ----------------------------------------------------------------------------

    def inject(self, fault: Fault | str, *, times: int = 1, model: str | None = None) -> None:
        """Queue ``fault`` for the next ``times`` requests (for ``model`` only, if given)."""
        chosen = FAULTS[fault] if isinstance(fault, str) else fault
        with self._lock:
            self._queue.extend([(chosen, model)] * times)

    def pending(self) -> int:
        """Queued faults not yet used."""
        with self._lock:
            return len(self._queue)

    def reset(self) -> None:
        """Forget requests, counts and queued faults (not the config)."""
        with self._lock:
            self._queue.clear()
        self.requests.clear()
        self.slots.clear()
        self.max_in_flight.clear()
        self.batch_store.reset()

    def stats(self) -> dict[str, Any]:
        """Counts as plain data (also served as JSON on ``GET /_sim/stats``)."""
        slots = list(self.slots.values())
        return {
            "requests": len(self.requests),
            "slots": len(slots),
            "answered": sum(s.answered for s in slots),
            "answered_twice": sum(s.answered > 1 for s in slots),
            "after_answer": sum(s.after_answer for s in slots),
            "unanswered": sum(s.answered == 0 for s in slots),
            "max_in_flight": dict(self.max_in_flight),
        }

    @property
    def batches_created(self) -> int:
        """Batches created through the Batch API since the last reset."""
        return self.batch_store.created

    # handlers ----------------------------------------------------------------------------

    def _auth_error(self, request: web.Request) -> web.Response | None:
        expected = self.config.api_key
        if expected is None:
            return None
        given = request.headers.get("Authorization", "")
        if not given.startswith("Bearer ") or not given[7:]:
            text = "You didn't provide an API key. Provide it as 'Authorization: Bearer KEY'."
            return _json(error_body(401, text), 401)
        if given[7:] != expected:
            text = f"Incorrect API key provided: {_mask(given[7:])}."
            return _json(error_body(401, text), 401)
        return None

    async def _models(self, request: web.Request) -> web.Response:
        denied = self._auth_error(request)
        if denied is not None:
            return denied
        context = self.config.context
        data = []
        for name in (self.config.serve_as,) if self.config.serve_as else SERVED:
            entry: dict[str, Any] = {"id": name, "object": "model", "created": 0}
            entry["owned_by"] = "blindtest"
            if context is not None:
                entry["max_model_len"] = context  # as vLLM lists it
            data.append(entry)
        return _json(orjson.dumps({"object": "list", "data": data}))

    async def _props(self, request: web.Request) -> web.Response:
        """llama.cpp's ``GET /props`` (at the server's root): the context it was started with."""
        if self.config.context is None:
            return _json(error_body(404, "File Not Found"), 404)
        settings = {"n_ctx": self.config.context}
        return _json(orjson.dumps({"default_generation_settings": settings}))

    async def _stats(self, request: web.Request) -> web.Response:
        return _json(orjson.dumps(self.stats()))

    async def _reset(self, request: web.Request) -> web.Response:
        self.reset()
        return _json(orjson.dumps(self.stats()))

    # the Batch API ---------------------------------------------------------------------------

    def _guarded(
        self, handler: Callable[[web.Request], Awaitable[web.Response]]
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def guarded(request: web.Request) -> web.Response:
            denied = self._auth_error(request)
            return denied if denied is not None else await handler(request)

        return guarded

    async def _create_batch(self, request: web.Request) -> web.Response:
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return _json(error_body(400, "We could not parse the JSON body of your request."), 400)
        expire = self.config.batch_expire_next > 0
        response = self.batch_store.create(body, expire)
        if response.status == 200 and expire:
            self.config.batch_expire_next -= 1
        return response

    async def _retrieve_batch(self, request: web.Request) -> web.Response:
        return self.batch_store.retrieve(
            request.match_info["batch_id"],
            self.config.batch_delay,
            self.config.batch_fail_every,
            self._batch_answer,
        )

    async def _recent_batches(self, request: web.Request) -> web.Response:
        return self.batch_store.recent(self.config.batch_delay)

    def _batch_answer(self, body: Any) -> tuple[int, bytes]:
        """One batch request answered as POST /v1/chat/completions answers it, no fault."""
        problem = _check_body(body)
        if problem is not None:
            return 400, error_body(400, *problem)
        if self.config.serve_as is not None:
            body["model"] = self.config.serve_as
        if body["model"] not in SERVED:
            text = f"The model `{body['model']}` does not exist or you do not have access to it."
            return 404, error_body(404, text)
        slot = self._slot(body["model"], body)
        slot.received += 1
        if slot.answered:
            slot.after_answer += 1
        payload, usable = self._completion(body, None)
        slot.answered += usable
        return 200, payload

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        arrived = asyncio.get_running_loop().time()
        raw = await request.read()
        self.requests.append(
            ReceivedRequest(
                {k.lower(): v for k, v in request.headers.items()}, raw, time.monotonic()
            )
        )
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return _json(error_body(400, "We could not parse the JSON body of your request."), 400)
        denied = self._auth_error(request)
        if denied is not None:
            return denied
        problem = _check_body(body)
        if problem is None and self.config.refuse_response_format and "response_format" in body:
            problem = ("Unrecognized request argument supplied: response_format", "response_format")
        if problem is not None:
            return _json(error_body(400, *problem), 400)
        if self.config.grammar_fails and "response_format" in body:
            return _json(GRAMMAR_FAILED_BODY.encode(), 400)
        if self.config.serve_as is not None:
            body["model"] = self.config.serve_as
        model = body["model"]
        refused = self._refused(body)
        if refused is not None:
            return refused
        slot = self._slot(model, body)
        nth = slot.received
        slot.received += 1
        if slot.answered:
            slot.after_answer += 1
        fault = self._fault(request, body, slot, nth)
        in_flight = self.in_flight.get(model, 0)
        if fault is None and self.config.capacity is not None and in_flight >= self.config.capacity:
            fault = FAULTS["429"]
        self.in_flight[model] = in_flight + 1
        self.max_in_flight[model] = max(self.max_in_flight.get(model, 0), in_flight + 1)
        try:
            return await self._answer(request, body, slot, fault, arrived)
        finally:
            self.in_flight[model] -= 1

    def _refused(self, body: dict[str, Any]) -> web.Response | None:
        """A model not served (404), or a prompt longer than ``context`` (vLLM's 400)."""
        if body["model"] not in SERVED:
            text = f"The model `{body['model']}` does not exist or you do not have access to it."
            return _json(error_body(404, text), 404)
        too_long = self._over_context(body)
        return None if too_long is None else _json(too_long, 400)

    def _over_context(self, body: dict[str, Any]) -> bytes | None:
        """vLLM's 400 body for a prompt longer than ``context`` (None: it fits, or no
        context)."""
        context = self.config.context
        if context is None:
            return None
        tokens = sum(len(str(m.get("content", "")).split()) + 3 for m in body["messages"])
        if tokens <= context:
            return None
        text = (
            f"This model's maximum context length is {context} tokens. However, you requested "
            f"{tokens} tokens in the messages. Please reduce the length of the messages."
        )
        return orjson.dumps({"object": "error", "message": text, "type": "BadRequestError",
                             "param": None, "code": 400})  # fmt: skip

    def _slot(self, model: str, body: dict[str, Any]) -> SlotCount:
        messages = orjson.dumps(body["messages"], option=orjson.OPT_SORT_KEYS)
        seed = body.get("seed")
        digest = hashlib.sha256(messages).hexdigest()
        key = f"{model}\x00{seed}\x00{digest}"
        slot = self.slots.get(key)
        if slot is None:
            slot = self.slots[key] = SlotCount(model, seed, digest)
        return slot

    def _fault(
        self, request: web.Request, body: dict[str, Any], slot: SlotCount, nth: int
    ) -> Fault | None:
        after = self.config.fail_after
        if after is not None and len(self.requests) > after:
            return FAULTS[self.config.fail_with]
        named = request.headers.get("x-sim-fault")
        if named:
            unknown = f"unknown x-sim-fault {named!r}; known: {', '.join(FAULTS)}"
            return FAULTS.get(named, Fault("status", status=400, message=unknown))
        for message in body["messages"]:
            if message.get("role") != "user" or not isinstance(message.get("content"), str):
                continue
            for found in DIRECTIVE.finditer(message["content"]):
                limit = found.group(2)
                if found.group(1) in FAULTS and (limit is None or nth < int(limit)):
                    return FAULTS[found.group(1)]
        with self._lock:
            for i, (fault, model) in enumerate(self._queue):
                if model is None or model == slot.model:
                    del self._queue[i]
                    return fault
        mix = self.config.mix
        key = f"{slot.model}\x00{slot.seed}\x00{slot.messages_sha256}"
        return mix.choose(key, nth) if mix is not None else None

    async def _answer(
        self,
        request: web.Request,
        body: dict[str, Any],
        slot: SlotCount,
        fault: Fault | None,
        arrived: float,
    ) -> web.StreamResponse:
        kind = fault.kind if fault else None
        if fault is not None and kind == "status":
            return self._status_fault(request, fault)
        if fault is not None and kind == "html":
            phrase = HTTPStatus(fault.status).phrase
            page = HTML_PAGE.format(status=fault.status, phrase=phrase)
            return web.Response(text=page, status=fault.status, content_type="text/html")
        if kind == "reset":
            _reset_connection(request)
            return web.Response(status=500)
        payload, usable = self._completion(body, kind)
        # Latency counts from arrival, the text's composition included, as a real server's
        # does; composing first also keeps the CPU work off the moment the timers fire.
        extra = fault.delay if fault is not None and kind == "slow" else 0.0
        await _wait_until(request, arrived + self.config.latency + extra, watch=bool(extra))
        await self._released(request)
        if kind not in ("truncate", "slow_read"):
            transport = request.transport
            if transport is None or transport.is_closing():
                return web.Response(status=499)  # the client left (e.g. timed out): unanswered
            # One write for headers and body (a streamed answer costs a second send() per
            # request, which shows in the benchmark). Counted as it is written (so a client
            # that has it finds it counted) and uncounted if it cannot be: the client left.
            answer = _json(payload)
            slot.answered += usable
            try:
                await answer.prepare(request)
                await answer.write_eof()
            except ConnectionError:
                slot.answered -= usable
            return answer
        response = web.StreamResponse(status=200)
        response.content_type = "application/json"
        response.content_length = len(payload)
        try:
            await response.prepare(request)
            if kind == "truncate":
                await response.write(payload[: len(payload) // 2])
                _reset_connection(request)
                return response
            await response.write(payload[:16])
            await asyncio.sleep(fault.delay if fault is not None else 0.0)
            await response.write(payload[16:])
            await response.write_eof()
        except ConnectionError:
            return response  # the client left (e.g. timed out): this slot was not answered
        if usable:
            slot.answered += 1
        return response

    async def _released(self, request: web.Request) -> None:
        """Until ``config.hold`` is off (or the client has left)."""
        while self.config.hold and not _gone(request):
            await asyncio.sleep(0.01)

    def _status_fault(self, request: web.Request, fault: Fault) -> web.Response:
        headers: dict[str, str] = {}
        if fault.retry_after is not None:
            headers["Retry-After"] = fault.retry_after
        if fault.retry_after_ms is not None:
            headers["retry-after-ms"] = str(fault.retry_after_ms)
        if fault.retry_after_date is not None:
            when = time.time() + fault.retry_after_date
            headers["Retry-After"] = email.utils.formatdate(when, usegmt=True)
        if fault.should_retry is not None:
            headers["x-should-retry"] = "true" if fault.should_retry else "false"
        if fault.body is not None:
            return web.Response(
                body=fault.body.encode(),
                status=fault.status,
                content_type="application/json",
                headers=headers,
            )
        message = fault.message
        if message is not None:
            token = request.headers.get("Authorization", "").removeprefix("Bearer ")
            message = message.replace("{key}", token)
        return _json(error_body(fault.status, message), fault.status, headers)

    def _completion(self, body: dict[str, Any], kind: FaultKind | None) -> tuple[bytes, bool]:
        """The 200 body for this request, and whether it counts as an answer."""
        self._counter += 1
        model: str = body["model"]
        created = int(time.time())
        head = {
            "id": f"chatcmpl-sim{self._counter:08d}",
            "object": "chat.completion",
            "created": created,
            "model": model,
        }
        if kind == "invalid_json":
            return orjson.dumps(head)[:-1] + b', "choices": [{"index": 0, "message": {', False
        if kind == "empty_choices":
            return orjson.dumps({**head, "choices": []}), False
        messages = body["messages"]
        prompt_tokens = sum(len(str(m.get("content", "")).split()) + 3 for m in messages)
        content: str | None
        refusal: str | None = None
        finish = "stop"
        if kind == "refusal":
            content, refusal = None, "I'm sorry, but I can't help with that."
        elif kind == "no_content":
            content = None
        else:
            content, finish = self._text(body)
        words = len((content or refusal or "").split())
        message = {"role": "assistant", "content": content, "refusal": refusal}
        choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": words,
            "total_tokens": prompt_tokens + words,
        }
        document = {**head, "choices": [choice], "usage": usage, "system_fingerprint": "fp_sim"}
        return orjson.dumps(document), kind != "no_content"

    def _text(self, body: dict[str, Any]) -> tuple[str, str]:
        if body["model"] in JUDGE_MODELS:
            nth = self._slot(body["model"], body).received - 1
            return judge_text(body["model"], body["messages"], body, nth), "stop"
        if body["model"] in self.config.canned_models:
            return self.config.canned_text, "stop"
        temperature = body.get("temperature")
        temperature = 1.0 if temperature is None else float(temperature)
        if self.config.deterministic or body["model"] in self.config.deterministic_models:
            temperature = 0.0
        seed = body.get("seed")
        # With a seed, sampling is reproducible (OpenAI's best effort, here exact); without
        # one, the request counter makes every call a fresh draw.
        draw = (
            seeded_random(body["model"], body["messages"], "seed", seed)
            if seed is not None
            else (seeded_random(body["model"], body["messages"], "call", self._counter))
        )
        text = compose(body["model"], body["messages"], temperature=temperature, draw=draw)
        cap = body.get("max_completion_tokens") or body.get("max_tokens")
        words = WORD.findall(text)
        if cap is not None and len(words) > cap:
            return "".join(words[:cap]).rstrip(), "length"
        return text, "stop"


@contextlib.contextmanager
def running(config: SimulatorConfig | None = None, *, port: int = 0) -> Iterator[Simulator]:
    """Serve a :class:`Simulator` from a daemon thread with its own event loop.

    For synchronous callers (pytest fixtures, a CLI run that calls ``asyncio.run`` itself):
    the server's loop never competes with the caller's. Its controls (``inject``, ``config``,
    ``slots``) may be used from the calling thread.
    """
    simulator = Simulator(config, port=port)
    ready = threading.Event()
    failure: list[BaseException] = []
    control: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    async def serve() -> None:
        try:
            await simulator.start()
        except BaseException as error:  # handed to the caller below
            failure.append(error)
            ready.set()
            return
        stop = asyncio.Event()
        control.append((asyncio.get_running_loop(), stop))
        ready.set()
        try:
            await stop.wait()
        finally:
            await simulator.stop()

    thread = threading.Thread(
        target=asyncio.run, args=(serve(),), name="blindtest-simulator", daemon=True
    )
    thread.start()
    ready.wait()
    if failure:
        thread.join()
        raise failure[0]
    try:
        yield simulator
    finally:
        loop, stop = control[0]
        loop.call_soon_threadsafe(stop.set)
        thread.join()
