"""The OpenAI chat-completions wire format, as bytes and dicts: the request body blindtest
sends, a completion read out of a response body, and an error body read as structure.

Pure: no socket, no aiohttp, no file, no environment. The client
(:mod:`blindtest.transport.client`)
sends what :func:`request_body` builds and reads answers with :func:`parse_completion` and
:func:`parse_error`; batch import and an LLM judge reuse the same functions on bodies they get
another way. Nothing here ever sees an API key.

The shapes follow OpenAI's published ``CreateChatCompletionRequest``,
``CreateChatCompletionResponse`` and ``ErrorResponse`` (the tests validate the bodies built
here against ``tests/data/openai-chat-completions.schema.json``), read leniently where
OpenAI-compatible servers (vLLM, llama.cpp, Ollama, LM Studio, LiteLLM) differ.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypedDict
from urllib.parse import urlsplit

import orjson

from blindtest.model.normalize import split_reasoning

__all__ = [
    "CUT_OFF",
    "USABLE_KINDS",
    "BodyKind",
    "ChatMessage",
    "ParsedCompletion",
    "ServerError",
    "TokenField",
    "Usage",
    "names_param",
    "parse_completion",
    "parse_error",
    "prompt_too_long",
    "quota_exceeded",
    "request_body",
    "token_field_for",
]


class ChatMessage(TypedDict):
    """One chat message as the API takes it."""

    role: str
    content: str


# --------------------------------------------------------------------------------------------
# Requests

TokenField = Literal["max_tokens", "max_completion_tokens"]


def token_field_for(base_url: str) -> TokenField:
    """The body field for the token cap at ``base_url``: OpenAI's own API deprecated
    ``max_tokens`` (its reasoning models refuse it) for ``max_completion_tokens``; every other
    OpenAI-compatible server reads ``max_tokens``."""
    host = urlsplit(base_url).hostname
    return "max_completion_tokens" if host == "api.openai.com" else "max_tokens"


def request_body(
    model: str,
    messages: Sequence[ChatMessage],
    *,
    temperature: float | None = None,
    top_p: float | None = None,
    max_tokens: int | None = None,
    token_field: TokenField = "max_tokens",
    seed: int | None = None,
    extra: Mapping[str, object] | None = None,
    response_format: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """The JSON body for one chat completion: model, messages, then only the sampling
    parameters that are set (``None`` leaves the server's default), in the order temperature,
    top_p, the token cap under ``token_field``, seed, then ``response_format`` (an LLM
    judge's JSON schema). One choice per request: never ``n``. ``extra`` (a side's
    ``--a-param``) is applied last: a field set to ``None`` is removed; an ``extra_body``
    object's fields are merged into the top level."""
    if not messages:
        raise ValueError("a chat completion needs at least one message")
    body: dict[str, object] = {
        "model": model,
        "messages": [dict(message) for message in messages],
    }
    if temperature is not None:
        body["temperature"] = temperature
    if top_p is not None:
        body["top_p"] = top_p
    if max_tokens is not None:
        body[token_field] = max_tokens
    if seed is not None:
        body["seed"] = seed
    if response_format is not None:
        body["response_format"] = dict(response_format)
    for name, value in _flat_extra(extra or {}).items():
        if value is None:
            body.pop(name, None)
        else:
            body[name] = value
    return body


def _flat_extra(extra: Mapping[str, object]) -> dict[str, object]:
    """``extra`` with an ``extra_body`` object's fields at the top level over the rest, as the
    openai SDK sends them (bt-design merges them already; a design written by another
    program may still hold one)."""
    nested = extra.get("extra_body")
    if not isinstance(nested, Mapping):
        return dict(extra)
    return {name: value for name, value in extra.items() if name != "extra_body"} | dict(nested)


# --------------------------------------------------------------------------------------------
# Completions

BodyKind = Literal[
    # usable: the model answered (kept, flagged, counted)
    "ok",
    "length",
    "refusal",
    # a 2xx whose body is not a usable completion
    "html",
    "invalid_json",
    "malformed",
    "empty_choices",
    "no_content",
]
USABLE_KINDS: frozenset[str] = frozenset({"ok", "length", "refusal"})
#: ``finish_reason`` values that mean "cut at the token limit": OpenAI, vLLM, llama.cpp and
#: Ollama say ``length``; Anthropic-style gateways pass ``max_tokens`` through.
CUT_OFF: frozenset[str] = frozenset({"length", "max_tokens"})


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the server reported them."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


@dataclass(frozen=True, slots=True)
class ParsedCompletion:
    """What one 2xx body says. ``kind`` classifies it (:data:`USABLE_KINDS` are answers);
    ``text`` is the first choice's content (``""`` when there is none), ``refusal`` the
    message's ``refusal`` field, ``model`` the model the server says answered, ``detail`` a
    one-line reason for the kinds that are not answers."""

    kind: BodyKind
    text: str = ""
    finish_reason: str | None = None
    usage: Usage | None = None
    model: str | None = None
    refusal: str | None = None
    response_id: str | None = None
    detail: str = ""
    #: The model's reasoning (``reasoning_content``, ``reasoning``, leading ``<think>``
    #: blocks): kept out of ``text``, so never shown to a judge.
    reasoning: str | None = None

    @property
    def ok(self) -> bool:
        """True when the model answered (even if it refused or was cut at the token cap)."""
        return self.kind in USABLE_KINDS

    @property
    def truncated(self) -> bool:
        """True when the answer was cut at the token limit."""
        return self.finish_reason in CUT_OFF


_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def _looks_html(payload: bytes, content_type: str) -> bool:
    return content_type == "text/html" or payload.lstrip()[:1] == b"<"


def _html_title(payload: bytes) -> str:
    found = _TITLE.search(payload[:65536])
    title = found.group(1).decode("utf-8", "replace").strip() if found else ""
    return f"an HTML page ({title!r})" if title else "an HTML page"


def _snippet(payload: bytes) -> str:
    return repr(payload[:80].decode("utf-8", "replace"))


def _usage(raw: object) -> Usage | None:
    if not isinstance(raw, dict):
        return None

    def count(name: str) -> int | None:
        value = raw.get(name)
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return value if ok else None

    prompt, completion, total = (
        count("prompt_tokens"),
        count("completion_tokens"),
        count("total_tokens"),
    )
    if prompt is None and completion is None and total is None:
        return None
    prompt, completion = prompt or 0, completion or 0
    return Usage(prompt, completion, total if total is not None else prompt + completion)


def _content_text(content: object) -> str | None:
    """Message content as text; some servers send a list of ``{"type": "text"}`` parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        return "".join(p for p in parts if isinstance(p, str))
    raise TypeError


# A refusal written as the whole answer (most servers have no ``refusal`` field): short, and
# opening with the stock phrases. Deliberately narrow: an answer that merely apologises
# somewhere is an answer.
_REFUSAL = re.compile(
    r"^\W*(?:I'm sorry|I am sorry|Sorry|I apologi[sz]e)\b[^.!?\n]{0,40}?\b"
    r"(?:can't|cannot|can not|won't|will not|am unable to|'m unable to|am not able to)\b"
    r"|^\W*I (?:can't|cannot|won't|will not) (?:help|assist|comply|provide|do that)",
    re.IGNORECASE,
)
_REFUSAL_MAX_WORDS = 40


def _refuses(text: str | None) -> bool:
    return (
        bool(text)
        and len(str(text).split()) <= _REFUSAL_MAX_WORDS
        and bool(_REFUSAL.match(str(text).replace("\u2019", "'")))
    )


def parse_completion(payload: bytes, content_type: str = "application/json") -> ParsedCompletion:
    """Read a 2xx chat-completions body. Never raises: anything that is not a completion gets
    a kind (``html``, ``invalid_json``, ``malformed``, ``empty_choices``, ``no_content``) and
    a ``detail``. A ``refusal`` field, ``finish_reason: content_filter`` or an answer that is
    only a stock refusal is ``refusal``; a cut at the token cap is ``length``."""
    if _looks_html(payload, content_type):
        return ParsedCompletion(
            "html", detail=f"HTTP 2xx with {_html_title(payload)} instead of JSON"
        )
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError:
        detail = f"invalid JSON in the answer: {_snippet(payload)}"
        return ParsedCompletion("invalid_json", detail=detail)
    if not isinstance(data, dict) or "choices" not in data:
        said = parse_error(payload, content_type).message if isinstance(data, dict) else ""
        detail = f"not a chat completion: {said or _snippet(payload)}"
        return ParsedCompletion("malformed", detail=detail)
    choices = data["choices"]
    if isinstance(choices, list) and not choices:
        return ParsedCompletion("empty_choices", detail="the answer had an empty choices list")
    try:
        choice = choices[0]
        message = choice["message"]
        text = _content_text(message.get("content"))
    except (TypeError, KeyError, AttributeError):
        return ParsedCompletion("malformed", detail=f"not a chat completion: {_snippet(payload)}")
    text, reasoning = _reasoning(message, text)
    refusal = message.get("refusal")
    refusal = refusal if isinstance(refusal, str) and refusal else None
    finish = choice.get("finish_reason")
    finish = finish if isinstance(finish, str) else None
    kind: BodyKind
    if refusal is not None or finish == "content_filter" or _refuses(text):
        kind = "refusal"
    elif finish in CUT_OFF:
        kind = "length"
    elif not text:
        kind = "no_content"
    else:
        kind = "ok"
    model, rid = data.get("model"), data.get("id")
    return ParsedCompletion(
        kind,
        text=text or "",
        finish_reason=finish,
        usage=_usage(data.get("usage")),
        model=model if isinstance(model, str) else None,
        refusal=refusal,
        response_id=rid if isinstance(rid, str) else None,
        detail="the answer had no content and no refusal" if kind == "no_content" else "",
        reasoning=reasoning,
    )


def _reasoning(message: Mapping[str, object], text: str | None) -> tuple[str | None, str | None]:
    """The answer without its reasoning, and the reasoning: a ``reasoning_content`` field
    (DeepSeek, vLLM, llama.cpp), a ``reasoning`` field (OpenRouter, Ollama), leading
    ``<think>`` blocks in the content."""
    parts = [
        value
        for value in (message.get("reasoning_content"), message.get("reasoning"))
        if isinstance(value, str) and value.strip()
    ]
    if text:
        text, inline = split_reasoning(text)
        if inline:
            parts.append(inline)
    return text, "\n\n".join(parts) if parts else None


# --------------------------------------------------------------------------------------------
# Error bodies


@dataclass(frozen=True, slots=True)
class ServerError:
    """What an error body says, as structure: the server's words and, where it gives them,
    ``code``, ``type`` and ``param`` (a numeric code, as llama.cpp and vLLM send, as text)."""

    message: str
    code: str | None = None
    type: str | None = None
    param: str | None = None


def _text_or_none(value: object) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (str, int)):
        return str(value)
    return None


def _error_fields(error: Mapping[str, object], fallback: str) -> ServerError:
    message = error.get("message")
    return ServerError(
        message if isinstance(message, str) else fallback,
        code=_text_or_none(error.get("code")),
        type=_text_or_none(error.get("type")),
        param=_text_or_none(error.get("param")),
    )


def parse_error(payload: bytes, content_type: str = "application/json") -> ServerError:
    """The server's error body read as structure. Shapes seen in the wild: OpenAI, llama.cpp,
    LiteLLM and current vLLM ``{"error": {"message", "type", "code", "param"}}``; Ollama's
    native ``{"error": "..."}``; older vLLM ``{"object": "error", "message", "type",
    "code"}`` at the top level; else an HTML page's title or a snippet of the body."""
    if _looks_html(payload, content_type):
        return ServerError(_html_title(payload))
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return ServerError(_snippet(payload) if payload.strip() else "empty body")
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict):
            return _error_fields(error, _snippet(payload))
        if isinstance(error, str):
            return ServerError(error)
        if isinstance(data.get("message"), str):
            return _error_fields(data, _snippet(payload))
    return ServerError(_snippet(payload))


# Reasoning models: a 400 naming a sampling parameter the model does not take.
# Structure first (OpenAI: param "temperature", code "unsupported_value"; param "max_tokens",
# code "unsupported_parameter"), the server's wording second.
_UNSUPPORTED_CODES = frozenset({"unsupported_value", "unsupported_parameter", "invalid_value"})
_NOT_FIXABLE = frozenset({"model", "messages", "seed", "stream", "n"})
_TOKEN_FIELDS = ("max_completion_tokens", "max_tokens")


def _rejected_param(body: ServerError) -> str | None:
    if body.param and body.param not in _NOT_FIXABLE and body.code in _UNSUPPORTED_CODES:
        return body.param
    words = body.message.lower()
    if "unsupported" not in words and "not supported" not in words:
        return None
    if "temperature" in words:
        return "temperature"
    return next((f for f in _TOKEN_FIELDS if f in words), None)


def parameter_fix(status: int, body: ServerError, side: str) -> str | None:
    """For a 400 that refuses a sampling parameter, the one option to change (``side`` A or
    B, or a candidate's name): ``--a-temperature 1`` when only the default temperature is accepted,
    ``--a-param max_tokens=null`` for a refused token field, ``--a-param NAME=null`` for any
    other refused parameter; None when the error is something else."""
    if status not in (400, 422) or side in ("judge", "launder"):
        return None
    param = _rejected_param(body)
    if param is None:
        return None
    if side not in ("A", "B"):  # a candidate: its table in a --sides file
        return _candidate_fix(side, param)
    lower = side.lower()
    if param == "temperature":
        return (
            f"this model takes only its default temperature: design again with "
            f"--{lower}-temperature 1 (or --{lower}-param temperature=null to send none)"
        )
    if param in _TOKEN_FIELDS:
        other = next(f for f in _TOKEN_FIELDS if f != param)
        return (
            f"this model refuses {param}: design again with --{lower}-param {param}=null "
            f"(and --{lower}-param {other}=N for a limit)"
        )
    return f"this model refuses {param}: design again with --{lower}-param {param}=null"


def _candidate_fix(name: str, param: str) -> str:
    """:func:`parameter_fix` for a candidate, whose configuration is a table of a --sides file
    (or the options shared by every candidate)."""
    table = f"{name}'s table of a --sides file"
    if param == "temperature":
        return (
            f"this model takes only its default temperature: design again with temperature = 1 "
            f"in {table} (or --temperature 1 for every candidate)"
        )
    if param in _TOKEN_FIELDS:
        other = next(f for f in _TOKEN_FIELDS if f != param)
        return (
            f"this model refuses {param}: design again with {param} = null in the extra_params "
            f"of {table} (and {other} = N there for a limit)"
        )
    return (
        f"this model refuses {param}: design again with {param} = null in the extra_params of "
        f"{table}"
    )


# Recognising "this prompt does not fit": by status, code or type first, wording second.
# Sources of each body are quoted in tests/generation/test_generate_prompt_too_long.py.
_TOO_LONG_CODES = frozenset({"context_length_exceeded"})  # OpenAI
_TOO_LONG_TYPES = frozenset({"exceed_context_size_error", "context_length_exceeded"})  # llama.cpp
_TOO_LONG_WORDS = (
    "maximum context length",  # OpenAI, vLLM: "This model's maximum context length is N tokens"
    "exceeds the available context size",  # llama.cpp
    "exceeds the context length",  # Ollama: "the input length exceeds the context length"
    "contextwindowexceedederror",  # LiteLLM: "litellm.ContextWindowExceededError: ..."
    "context_length_exceeded",
    "prompt is too long",  # Anthropic behind a proxy
)


def prompt_too_long(status: int | None, said: ServerError) -> bool:
    """Whether an error answer means the prompt does not fit the model (or the server's body
    limit): HTTP 413; OpenAI's ``context_length_exceeded`` code; llama.cpp's
    ``exceed_context_size_error`` type; then the wording of vLLM, Ollama and LiteLLM, on a 4xx
    or a 500 (Ollama has answered 500 for it)."""
    if status == 413:
        return True
    if status is None or not (400 <= status < 500 or status == 500):
        return False
    if said.code in _TOO_LONG_CODES or said.type in _TOO_LONG_TYPES:
        return True
    lowered = said.message.lower()
    return any(words in lowered for words in _TOO_LONG_WORDS)


# OpenAI's billing error arrives as a 429 like a rate limit; retrying it only burns time.
_QUOTA_CODES = frozenset({"insufficient_quota"})


def quota_exceeded(status: int | None, said: ServerError) -> bool:
    """A 429 that is a billing limit (``insufficient_quota``), not a rate limit."""
    return status == 429 and (said.code in _QUOTA_CODES or said.type in _QUOTA_CODES)


def names_param(status: int | None, said: ServerError, param: str) -> bool:
    """Whether a 4xx refuses the request parameter ``param`` (a server that does not take
    ``seed``): by the body's ``param`` field (OpenAI, LiteLLM) when it has one; else, on a 400
    or 422, by the server's own words naming it as a whole word (vLLM's validation errors)."""
    if status is None or not 400 <= status < 500:
        return False
    if said.param is not None:
        return said.param == param
    if status not in (400, 422):
        return False
    return re.search(rf"\b{re.escape(param)}\b", said.message, re.IGNORECASE) is not None
