"""A local OpenAI-compatible chat-completions server, with switchable faults.

It owns ``POST /v1/chat/completions`` and ``GET /v1/models`` for three simulated models,
``sim-large`` (longer, headed, bulleted, em dashes), ``sim-small`` (short plain prose) and
``sim-launder`` (rewrites the last user message as plain prose), plus the faults a real
endpoint throws (429 with every kind of Retry-After, 5xx, HTML error pages, connection
resets, slow answers and slow reads, invalid JSON, empty ``choices``, refusals, 401, 404,
OpenAI's billing 429, and "prompt too long" as OpenAI, llama.cpp, vLLM, Ollama and LiteLLM
word it), the manners of some servers (a single-model server answering any model name, one
that ignores temperature), and a count of requests per slot (model, seed, messages). The
tests, ``make demo`` and the benchmark use it, in process (:class:`Simulator`,
:func:`running`) or as ``python -m blindtest.simulator --port N``.

It must never bind anything but 127.0.0.1, open an outgoing connection, touch global random
state, or log a key. Sampling is a pure function of the request: at temperature 0 a prompt
always gets the same text; above 0, the ``seed`` field (or, without one, a request counter)
picks among variants, more freely the higher the temperature.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import email.utils
import hashlib
import itertools
import os
import random
import re
import signal
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from types import TracebackType
from typing import Any, Literal, TypeVar

import orjson
from aiohttp import web

__all__ = [
    "CONTEXT_BODIES",
    "FAULTS",
    "MODELS",
    "QUOTA_BODY",
    "Fault",
    "FaultMix",
    "ReceivedRequest",
    "Simulator",
    "SimulatorConfig",
    "SlotCount",
    "main",
    "running",
]

HOST = "127.0.0.1"
MODELS = ("sim-large", "sim-small", "sim-launder")

T = TypeVar("T")

# --------------------------------------------------------------------------------------------
# Faults

FaultKind = Literal[
    "status", "html", "reset", "truncate", "slow", "slow_read", "invalid_json",
    "empty_choices", "no_content", "refusal",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Fault:
    """One misbehaviour for one request.

    ``status``: an error status with an OpenAI-style error body (``message`` overrides the
    text; ``{key}`` in it is replaced by the bearer token received, to play a server that
    echoes secrets). ``html``: an HTML error page with ``status``. ``reset``: the connection
    is reset before any answer; ``truncate``: reset halfway through the body. ``slow``: the
    answer comes after ``delay`` seconds; ``slow_read``: headers at once, then ``delay``
    seconds of silence mid-body. ``invalid_json``, ``empty_choices``, ``no_content``,
    ``refusal``: a 200 with that body. ``retry_after`` (verbatim), ``retry_after_ms`` and
    ``retry_after_date`` (seconds from now, sent as an HTTP-date) set the retry headers,
    ``should_retry`` sets ``x-should-retry``. ``body``: send this error body verbatim
    (a real server's exact words, e.g. llama.cpp's context error) instead of the OpenAI one.
    """

    kind: FaultKind
    status: int = 500
    retry_after: str | None = None
    retry_after_ms: int | None = None
    retry_after_date: float | None = None
    should_retry: bool | None = None
    delay: float = 0.0
    message: str | None = None
    body: str | None = None


def _rate_limit(**kw: Any) -> Fault:
    return Fault("status", status=429, **kw)


#: OpenAI's billing error: a 429 that no wait will fix.
QUOTA_BODY = (
    '{"error": {"message": "You exceeded your current quota, please check your plan and '
    "billing details. For more information on this error, read the docs: "
    'https://platform.openai.com/docs/guides/error-codes/api-errors.", '
    '"type": "insufficient_quota", "param": null, "code": "insufficient_quota"}}'
)
#: "The prompt does not fit" as each server says it.
CONTEXT_BODIES = {
    "openai": '{"error": {"message": "This model\'s maximum context length is 4097 tokens. '
    "However, your messages resulted in 4294 tokens. Please reduce the length of the "
    'messages.", "type": "invalid_request_error", "param": "messages", '
    '"code": "context_length_exceeded"}}',
    "llamacpp": '{"error": {"code": 400, "message": "request (4233 tokens) exceeds the '
    'available context size (512 tokens), try increasing it", '
    '"type": "exceed_context_size_error", "n_prompt_tokens": 4233, "n_ctx": 512}}',
    "vllm": '{"object": "error", "message": "This model\'s maximum context length is 16384 '
    "tokens. However, you requested 19591 tokens (9591 in the messages, 10000 in the "
    'completion). Please reduce the length of the messages or completion.", '
    '"type": "BadRequestError", "param": null, "code": 400}',
    "ollama": '{"error": {"message": "the input length exceeds the context length", '
    '"type": "invalid_request_error", "param": null, "code": null}}',
    "litellm": '{"error": {"message": "litellm.BadRequestError: '
    "litellm.ContextWindowExceededError: AnthropicError - "
    '{\\"type\\":\\"error\\",\\"error\\":{\\"type\\":\\"invalid_request_error\\",'
    '\\"message\\":\\"prompt is too long: 200480 tokens > 200000 maximum\\"}}\\n'
    'Received Model Group=anthropic/claude-3-5-sonnet-20241022", '
    '"type": null, "param": null, "code": "400"}}',
}

# Named faults, for the ``x-sim-fault`` header, ``[sim:NAME]`` prompt directives, fault mixes
# and the command line. Server-directed waits are short so that tests stay fast; "slow" and
# "slow-read" stall for 2 s, which is meant to outlast a test's short client timeout.
FAULTS: dict[str, Fault] = {
    "429": _rate_limit(retry_after_ms=20),
    "429-seconds": _rate_limit(retry_after="1"),
    "429-date": _rate_limit(retry_after_date=1.0),
    "429-bare": _rate_limit(),
    "400": Fault("status", status=400),
    "401": Fault("status", status=401),
    "403": Fault("status", status=403),
    "404": Fault("status", status=404),
    "408": Fault("status", status=408),
    "409": Fault("status", status=409),
    "422": Fault("status", status=422),
    "500": Fault("status", status=500),
    "502": Fault("status", status=502),
    "503": Fault("status", status=503),
    "html": Fault("html", status=502),
    "html-200": Fault("html", status=200),
    "reset": Fault("reset"),
    "truncate": Fault("truncate"),
    "slow": Fault("slow", delay=2.0),
    "slow-read": Fault("slow_read", delay=2.0),
    "invalid-json": Fault("invalid_json"),
    "empty-choices": Fault("empty_choices"),
    "no-content": Fault("no_content"),
    "refusal": Fault("refusal"),
    # Error bodies as real servers send them (sources in tests/test_i10_generate_too_long.py).
    "429-quota": Fault("status", status=429, body=QUOTA_BODY),
    "413": Fault("status", status=413),
    "context-openai": Fault("status", status=400, body=CONTEXT_BODIES["openai"]),
    "context-llamacpp": Fault("status", status=400, body=CONTEXT_BODIES["llamacpp"]),
    "context-vllm": Fault("status", status=400, body=CONTEXT_BODIES["vllm"]),
    "context-ollama": Fault("status", status=400, body=CONTEXT_BODIES["ollama"]),
    "context-litellm": Fault("status", status=400, body=CONTEXT_BODIES["litellm"]),
}

_ERRORS: dict[int, tuple[str, str, str | None]] = {
    400: ("Invalid request: one of the parameters is not valid.", "invalid_request_error", None),
    401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
    403: ("You are not allowed to sample from this model.", "invalid_request_error", None),
    404: ("The requested resource does not exist.", "invalid_request_error", "not_found"),
    408: ("Request timed out.", "timeout", None),
    409: ("Another request with the same key is in progress.", "conflict", None),
    422: ("Unprocessable request.", "invalid_request_error", None),
    429: (
        "Rate limit reached for requests. Please try again later.",
        "requests",
        "rate_limit_exceeded",
    ),
    500: (
        "The server had an error while processing your request. Sorry about that!",
        "server_error",
        None,
    ),
    503: ("The engine is currently overloaded, please try again later.", "server_error", None),
}

_HTML_PAGE = (
    "<!DOCTYPE html>\n<html><head><title>{status} {phrase}</title></head>\n"
    "<body><center><h1>{status} {phrase}</h1></center><hr><center>nginx</center>"
    "</body></html>\n"
)


@dataclass(frozen=True, slots=True)
class FaultMix:
    """Random faults by share of requests, e.g. ``{"429": 0.10, "reset": 0.05}``.

    Whether a request is hit is a pure function of (``seed``, its slot, how many requests that
    slot has had), not of arrival order, so two clients that ask for the same slots meet the
    same faults: that is what makes a side-by-side benchmark fair.
    """

    rates: Mapping[str, float]
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = sorted(set(self.rates) - set(FAULTS))
        if unknown:
            raise ValueError(f"unknown fault names {unknown}; known: {sorted(FAULTS)}")
        if any(not (0.0 <= r <= 1.0) for r in self.rates.values()) or sum(self.rates.values()) > 1:
            raise ValueError(f"fault rates must be in [0, 1] and sum to <= 1, got {self.rates}")

    @classmethod
    def parse(cls, text: str, seed: int = 0) -> FaultMix:
        """``"429=0.1,reset=0.05"`` -> FaultMix."""
        rates: dict[str, float] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"fault mix item {item!r} should look like NAME=SHARE")
            rates[name.strip()] = float(value)
        return cls(rates, seed)

    def choose(self, slot: str, nth: int) -> Fault | None:
        digest = hashlib.sha256(f"{self.seed}\x00{slot}\x00{nth}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        for name in sorted(self.rates):
            u -= self.rates[name]
            if u < 0:
                return FAULTS[name]
        return None


@dataclass(slots=True)
class SimulatorConfig:
    """Server-wide behaviour; mutable, so a test can change it while the server runs.

    ``latency``: seconds before every completion. ``api_key``: when set, requests must carry
    ``Authorization: Bearer <api_key>``. ``capacity``: answer 429 when more than this many
    requests for one model are in flight. ``mix``: random faults. ``serve_as``: play a
    single-model server (llama.cpp, a one-model vLLM): any model name is accepted and answered
    by this model, whose name the answer's ``model`` field carries. ``deterministic``: ignore
    ``temperature`` (answer as at 0), as some servers do, so a prompt always gets one text.
    """

    latency: float = 0.0
    api_key: str | None = None
    capacity: int | None = None
    mix: FaultMix | None = None
    serve_as: str | None = None
    deterministic: bool = False


@dataclass(slots=True)
class SlotCount:
    """Requests seen for one slot (model, seed, messages), and answers fully sent."""

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


# --------------------------------------------------------------------------------------------
# Text: two overlapping styles drawn from shared templates

_STOPWORDS = frozenset((
    "about", "above", "after", "again", "against", "also", "among", "answer", "because", "been",
    "before", "being", "below", "between", "both", "briefly", "could", "describe", "does",
    "doing", "down", "during", "each", "explain", "from", "further", "give", "have", "having",
    "here", "into", "just", "like", "make", "more", "most", "much", "name", "once", "only",
    "other", "over", "please", "quick", "same", "short", "should", "some", "such", "tell",
    "than", "that", "their", "them", "then", "there", "these", "they", "this", "those",
    "through", "under", "until", "very", "what", "when", "where", "which", "while", "whom",
    "will", "with", "would", "write", "your", "yours"
))  # fmt: skip
_OPENERS = (
    "{Topic} comes down to a few practical choices.",
    "The short answer: {topic} depends on what you optimise for.",
    "There are several ways to think about {topic}.",
    "{Topic} is easier to reason about once the goal is clear.",
    "It helps to split {topic} into smaller questions.",
    "Most of the difficulty with {topic} is in the details.",
    "A good place to start with {topic} is the constraint that matters most.",
    "With {topic}, the honest answer is that it depends.",
)
_POINTS = (
    "Start with {term}, since everything else builds on it.",
    "{Term} matters more than it first appears.",
    "Keep {term} simple until there is evidence it needs more.",
    "Measure {term} before changing it.",
    "Weigh {term} against the cost in time and money.",
    "Write down what {term} means in your case.",
    "Look for the smallest change to {term} that helps.",
    "Check {term} early, and again at the end.",
    "Treat {term} as a trade-off rather than a rule.",
    "Ask who depends on {term} before you change it.",
    "{Term} tends to fail quietly, so keep an eye on it.",
    "Compare two or three options for {term} side by side.",
)
_ASIDES = (
    "and the details matter",
    "though not every rule applies everywhere",
    "especially when time is short",
    "which is easy to overlook",
)
_CLOSINGS = (
    "In short, get {term} right first and adjust as you learn.",
    "Taken together, these steps make {topic} manageable.",
    "The rest follows from getting {term} right.",
    "Start small, check the results, and iterate.",
)
_TERMS = (
    "the main goal", "clear priorities", "the budget", "the timeline", "the audience",
    "quality", "consistency", "feedback", "the first draft", "the evidence", "the risks",
    "maintenance",
)  # fmt: skip
_HEADINGS = ("## {Title}", "## Overview", "### Key points", "**{Title}**")
_LEADS = (
    "Here is how I would approach it:",
    "Key considerations:",
    "A practical breakdown:",
    "The main points:",
)
_DIRECTIVE = re.compile(r"\[sim:([a-z0-9-]+)(?:\*(\d+))?\]")
_BAND = re.compile(r"(\d+)\s*(?:-|–|to|and)\s*(\d+)\s*words", re.IGNORECASE)
_WORD = re.compile(r"\S+\s*")
_PLAIN_QUOTES = str.maketrans("“”‘’", "\"\"''")


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256(orjson.dumps([repr(p) for p in parts])).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


class _Sampler:
    """Choices as a model would make them: a preferred option per prompt, and a temperature.

    Each choice has a mode, drawn from the weights by the prompt's own generator, so it is
    fixed for a prompt. At temperature 0 the mode is always taken; above 0, with probability
    ``min(1, temperature / 1.5)`` the draw generator samples the weights afresh instead.
    """

    def __init__(self, prompt: random.Random, draw: random.Random, temperature: float) -> None:
        self._prompt = prompt
        self._draw = draw
        self._variety = min(1.0, max(0.0, temperature) / 1.5)

    def pick(self, options: Sequence[T], weights: Sequence[float] | None = None) -> T:
        mode = self._prompt.choices(options, weights)[0]
        if self._variety and self._draw.random() < self._variety:
            return self._draw.choices(options, weights)[0]
        return mode


def _prompt_text(messages: Sequence[Mapping[str, Any]], role: str = "user") -> str:
    for message in reversed(messages):
        if message.get("role") == role and isinstance(message.get("content"), str):
            return _DIRECTIVE.sub("", str(message["content"])).strip()
    return ""


def _keywords(text: str) -> list[str]:
    seen: list[str] = []
    for word in re.findall(r"[A-Za-z][A-Za-z'-]{3,}", text):
        w = word.lower().strip("'-")
        if w not in _STOPWORDS and w not in seen:
            seen.append(w)
    return seen


class _Writer:
    def __init__(self, sampler: _Sampler, keywords: list[str]) -> None:
        self.s = sampler
        # The longest content word is a fair guess at the subject ("vegetables", "vaccines").
        self.topic = max(keywords, key=len) if keywords else "this"
        self.terms = [f"the {k}" for k in keywords[:4] if k != self.topic] + list(_TERMS)

    def fill(self, template: str) -> str:
        term = self.s.pick(self.terms)
        return template.format(
            topic=self.topic,
            Topic=self.topic[:1].upper() + self.topic[1:],
            Title=self.topic.title(),
            term=term,
            Term=term[:1].upper() + term[1:],
        )

    def sentence(self, templates: Sequence[str]) -> str:
        return self.fill(self.s.pick(templates))

    # Both styles return units: pieces of text that each end with their own separator, so
    # a length band can be met by keeping a prefix of whole sentences, bullets and headings.

    def large(self, points: int) -> list[str]:
        s = self.s
        units = []
        if s.pick([True, False], [0.85, 0.15]):
            units.append(self.fill(s.pick(_HEADINGS)) + "\n\n")
        opener = self.sentence(_OPENERS)
        units.append(f"{opener[:-1]} — {s.pick(_ASIDES)}.\n\n")
        if s.pick([True, False], [0.8, 0.2]):
            bullet = s.pick(["- **{Term}** — {point}", "- {point}", "{n}. **{Term}**: {point}"])
            units.append(s.pick(_LEADS) + "\n\n")
            for n in range(1, points + 1):
                term = s.pick(self.terms)
                capital = term[:1].upper() + term[1:]
                units.append(bullet.format(n=n, Term=capital, point=self.sentence(_POINTS)) + "\n")
        else:
            units.extend(self.sentence(_POINTS) + " " for _ in range(points))
        units[-1] = units[-1].rstrip() + "\n\n"
        units.append(self.sentence(_CLOSINGS))
        return units

    def small(self, points: int) -> list[str]:
        s = self.s
        opener = self.sentence(_OPENERS)
        body = [self.sentence(_POINTS) for _ in range(points)]
        if s.pick([False, True], [0.85, 0.15]):
            return [opener + "\n\n", *(f"- {p}\n" for p in body)]
        if s.pick([False, True], [0.9, 0.1]):
            body[0] = f"{body[0][:-1]} — {s.pick(_ASIDES)}."
        closing = [self.sentence(_CLOSINGS)] if s.pick([False, True], [0.6, 0.4]) else []
        return [f"{sentence} " for sentence in [opener, *body, *closing]]


def _launder(text: str, sampler: _Sampler) -> str:
    """Neutral prose: no headings, bullets, labels, emphasis, em dashes or smart quotes."""
    sentences = []
    for raw in text.splitlines():
        if re.match(r"^\s*#", raw) or re.fullmatch(r"\s*\*\*[^*]+\*\*\s*", raw):
            continue  # headings are structure, not prose
        line = re.sub(r"^\s*([-*+]|\d+[.)])\s+", "", raw)
        line = re.sub(r"^\*\*[^*]+\*\*\s*(—|–|:)\s*", "", line)  # "**Label** — " bullets
        line = re.sub(r"(\*\*|__|\*|`)", "", line).strip()
        line = re.sub(r"\s*[—–]\s*", ", ", line)
        line = line.translate(_PLAIN_QUOTES)
        if not line or line.endswith(":"):
            continue  # lead-ins to lists read oddly once the list is prose
        sentences.append(line if line[-1] in ".!?" else line + ".")
    out = sentences[:1]
    for sentence in sentences[1:]:
        joiner = sampler.pick(["", "Also, ", "In addition, "], [0.8, 0.1, 0.1])
        out.append(joiner + sentence[:1].lower() + sentence[1:] if joiner else sentence)
    return " ".join(out) if out else "There is nothing to rewrite."


def compose(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    *,
    temperature: float,
    draw: random.Random,
) -> str:
    """The simulated answer of ``model`` to ``messages`` (no faults, no token cap)."""
    prompt = _prompt_text(messages)
    prompt_key = orjson.dumps([dict(m) for m in messages], option=orjson.OPT_SORT_KEYS)
    seed = draw.getrandbits(64)

    def sampler() -> _Sampler:
        # Fresh generators per composition: the same (prompt, draw) always gives the same text.
        return _Sampler(_rng(model, prompt_key), random.Random(seed), temperature)

    if model == "sim-launder":
        return _launder(prompt, sampler())
    bands = (_BAND.search(str(m.get("content", ""))) for m in messages)
    band = next((found for found in bands if found is not None), None)
    large = model == "sim-large"
    s = sampler()
    writer = _Writer(s, _keywords(prompt))
    if band is None:
        points = s.pick([3, 4, 5, 6], [1, 2, 2, 1]) if large else s.pick([1, 2, 3], [1, 2, 1])
        return "".join(writer.large(points) if large else writer.small(points)).strip()
    lo, hi = sorted((int(band.group(1)), int(band.group(2))))
    # Mostly inside the band (large near the top, small near the bottom), sometimes outside,
    # so that out-of-band counting has something to count.
    share = (
        s.pick([0.7, 0.5, 0.3, 1.3], [4, 2, 1, 1])
        if large
        else s.pick([0.3, 0.5, 0.7, -0.3], [4, 2, 1, 1])
    )
    target = lo + share * (hi - lo)
    points = max(3, int(target / 8))  # more than enough: about 10 words a point
    units = writer.large(points) if large else writer.small(points)
    totals = list(itertools.accumulate(len(unit.split()) for unit in units))
    cut = min(range(len(units)), key=lambda i: abs(totals[i] - target))
    kept = units[: cut + 1]
    if len(kept) > 1 and kept[-1].rstrip().endswith(":"):
        kept.pop()  # a lead-in with nothing after it
    return "".join(kept).strip()


# --------------------------------------------------------------------------------------------
# The server


def _error_body(status: int, message: str | None = None, param: str | None = None) -> bytes:
    default, kind, code = _ERRORS.get(
        status, (HTTPStatus(status).phrase + ".", "invalid_request_error", None)
    )
    error = {"message": message or default, "type": kind, "param": param, "code": code}
    return orjson.dumps({"error": error})


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

    # handlers ----------------------------------------------------------------------------

    def _auth_error(self, request: web.Request) -> web.Response | None:
        expected = self.config.api_key
        if expected is None:
            return None
        given = request.headers.get("Authorization", "")
        if not given.startswith("Bearer ") or not given[7:]:
            text = "You didn't provide an API key. Provide it as 'Authorization: Bearer KEY'."
            return _json(_error_body(401, text), 401)
        if given[7:] != expected:
            text = f"Incorrect API key provided: {_mask(given[7:])}."
            return _json(_error_body(401, text), 401)
        return None

    async def _models(self, request: web.Request) -> web.Response:
        denied = self._auth_error(request)
        if denied is not None:
            return denied
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "blindtest"} for m in MODELS]
        return _json(orjson.dumps({"object": "list", "data": data}))

    async def _stats(self, request: web.Request) -> web.Response:
        return _json(orjson.dumps(self.stats()))

    async def _reset(self, request: web.Request) -> web.Response:
        self.reset()
        return _json(orjson.dumps(self.stats()))

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
            return _json(_error_body(400, "We could not parse the JSON body of your request."), 400)
        denied = self._auth_error(request)
        if denied is not None:
            return denied
        problem = _check_body(body)
        if problem is not None:
            return _json(_error_body(400, *problem), 400)
        if self.config.serve_as is not None:
            body["model"] = self.config.serve_as
        model = body["model"]
        if model not in MODELS:
            text = f"The model `{model}` does not exist or you do not have access to it."
            return _json(_error_body(404, text), 404)
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
        named = request.headers.get("x-sim-fault")
        if named:
            unknown = f"unknown x-sim-fault {named!r}; known: {', '.join(FAULTS)}"
            return FAULTS.get(named, Fault("status", status=400, message=unknown))
        for message in body["messages"]:
            if message.get("role") != "user" or not isinstance(message.get("content"), str):
                continue
            for found in _DIRECTIVE.finditer(message["content"]):
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
            page = _HTML_PAGE.format(status=fault.status, phrase=phrase)
            return web.Response(text=page, status=fault.status, content_type="text/html")
        if kind == "reset":
            _reset_connection(request)
            return web.Response(status=500)
        payload, usable = self._completion(body, kind)
        # Latency counts from arrival, the text's composition included, as a real server's
        # does; composing first also keeps the CPU work off the moment the timers fire.
        extra = fault.delay if fault is not None and kind == "slow" else 0.0
        loop = asyncio.get_running_loop()
        await asyncio.sleep(max(0.0, arrived + self.config.latency + extra - loop.time()))
        if kind not in ("truncate", "slow_read"):
            transport = request.transport
            if transport is None or transport.is_closing():
                return web.Response(status=499)  # the client left (e.g. timed out): unanswered
            if usable:
                slot.answered += 1
            # One write for headers and body: a streamed answer costs a second send() per
            # request, which shows in the benchmark.
            return _json(payload)
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
        return _json(_error_body(fault.status, message), fault.status, headers)

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
        temperature = body.get("temperature")
        temperature = 1.0 if temperature is None else float(temperature)
        if self.config.deterministic:
            temperature = 0.0
        seed = body.get("seed")
        # With a seed, sampling is reproducible (OpenAI's best effort, here exact); without
        # one, the request counter makes every call a fresh draw.
        draw = (
            _rng(body["model"], body["messages"], "seed", seed)
            if seed is not None
            else (_rng(body["model"], body["messages"], "call", self._counter))
        )
        text = compose(body["model"], body["messages"], temperature=temperature, draw=draw)
        cap = body.get("max_completion_tokens") or body.get("max_tokens")
        words = _WORD.findall(text)
        if cap is not None and len(words) > cap:
            return "".join(words[:cap]).rstrip(), "length"
        return text, "stop"


# --------------------------------------------------------------------------------------------
# Running it


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


async def _serve_forever(simulator: Simulator) -> None:
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, done.set)
    async with simulator:
        print(simulator.base_url, flush=True)
        await done.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m blindtest.simulator``: serve on 127.0.0.1 and print the base URL."""
    parser = argparse.ArgumentParser(
        prog="python -m blindtest.simulator",
        description="Local OpenAI-compatible server for blindtest (binds 127.0.0.1 only).",
    )
    parser.add_argument("--port", type=int, default=0, help="port (default 0: any free port)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay per completion")
    parser.add_argument(
        "--require-key-env",
        metavar="NAME",
        help="require 'Authorization: Bearer $NAME' (the key is read from that variable)",
    )
    parser.add_argument("--capacity", type=int, help="answer 429 above this many in flight")
    parser.add_argument(
        "--faults",
        default="",
        metavar="MIX",
        help=f"random faults, e.g. 429=0.1,reset=0.05; names: {', '.join(FAULTS)}",
    )
    parser.add_argument("--fault-seed", type=int, default=0, help="seed of the fault mix")
    parser.add_argument(
        "--serve-as",
        choices=MODELS,
        help="answer every model name with this model, as a single-model server does",
    )
    parser.add_argument(
        "--deterministic",
        action="store_true",
        help="ignore temperature (answer as at 0), as some servers do",
    )
    args = parser.parse_args(argv)
    key = None
    if args.require_key_env:
        key = os.environ.get(args.require_key_env)
        if not key:
            parser.error(f"environment variable {args.require_key_env} is not set")
    try:
        mix = FaultMix.parse(args.faults, args.fault_seed) if args.faults else None
    except ValueError as error:
        parser.error(str(error))
    config = SimulatorConfig(
        latency=args.latency_ms / 1000.0,
        api_key=key,
        capacity=args.capacity,
        mix=mix,
        serve_as=args.serve_as,
        deterministic=args.deterministic,
    )
    try:
        asyncio.run(_serve_forever(Simulator(config, port=args.port)))
    except OSError as error:
        print(f"simulator: cannot listen on {HOST}:{args.port}: {error.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
