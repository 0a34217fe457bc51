"""The simulator's faults: what can go wrong with one request (:class:`Fault`), the named
faults (:data:`FAULTS`, for the ``x-sim-fault`` header, ``[sim:NAME]`` prompt directives, mixes
and the command line), error bodies as real servers word them, and random mixes by share of
requests (:class:`FaultMix`). Pure data and functions: no socket, no clock.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, Literal

import orjson

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

#: llama.cpp's answer to a ``response_format`` whose grammar it cannot build: a 400 that does
#: not name the field (ggml-org/llama.cpp#23990; lidge-jun/opencodex#2135 quotes this body).
GRAMMAR_FAILED_BODY = (
    '{"error": {"code": 400, "message": "Failed to initialize samplers: failed to parse '
    'grammar", "type": "invalid_request_error"}}'
)

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
    # Silence until the client gives up or goes away (a server hung mid-run).
    "hang": Fault("slow", delay=3600.0),
    "invalid-json": Fault("invalid_json"),
    "empty-choices": Fault("empty_choices"),
    "no-content": Fault("no_content"),
    "refusal": Fault("refusal"),
    # Error bodies as real servers send them (sources in
    # tests/generation/test_generate_prompt_too_long.py).
    "429-quota": Fault("status", status=429, body=QUOTA_BODY),
    "413": Fault("status", status=413),
    "context-openai": Fault("status", status=400, body=CONTEXT_BODIES["openai"]),
    "context-llamacpp": Fault("status", status=400, body=CONTEXT_BODIES["llamacpp"]),
    "context-vllm": Fault("status", status=400, body=CONTEXT_BODIES["vllm"]),
    "context-ollama": Fault("status", status=400, body=CONTEXT_BODIES["ollama"]),
    "context-litellm": Fault("status", status=400, body=CONTEXT_BODIES["litellm"]),
}

ERRORS: dict[int, tuple[str, str, str | None]] = {
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

HTML_PAGE = (
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


def error_body(status: int, message: str | None = None, param: str | None = None) -> bytes:
    """An OpenAI-style error body for ``status`` (the stock message, or ``message``)."""
    default, kind, code = ERRORS.get(
        status, (HTTPStatus(status).phrase + ".", "invalid_request_error", None)
    )
    error = {"message": message or default, "type": kind, "param": param, "code": code}
    return orjson.dumps({"error": error})
