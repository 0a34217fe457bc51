"""``--check``: before a run, one small request per endpoint (each side, the launderer, an LLM
judge) and one line per thing that can be wrong with it: the key variable, the URL, the model,
the longest prompt against the model's context, the parameters, the cost. Nothing is written.

Per endpoint, in order: the key variable is set (its name only, never its value; a likely
misspelling named); ``GET /models`` answers (the URL is reachable; the model is listed; the
context where the server reports it: vLLM's ``max_model_len``, OpenRouter's and LM Studio's
``context_length``, llama.cpp's ``n_ctx`` from ``GET /props``); then one chat completion with
the endpoint's own parameters and a token cap of :data:`CHECK_TOKENS` (a parameter the model
refuses comes back as a 400 naming it, and the fix); the model name the server answers with.
The longest prompt is an estimate (:func:`blindtest.model.prompt_size.estimated_tokens`), and so is
the cost (from the prices given, else unknown).

The lines say nothing that depends on an answer's content, length or timing: what they name
per side is the configuration and whether the server takes it, as the design already says.
The sockets are the client's (:class:`blindtest.transport.client.ChatClient`)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from blindtest.errors import (
    AuthFailed,
    BadInput,
    ConnectionRefused,
    ConnectTimeout,
    EndpointFailed,
    EndpointRejected,
    EndpointUnreachable,
    PromptTooLong,
    QuotaExceeded,
)
from blindtest.transport.addresses import is_loopback
from blindtest.transport.client import ChatClient
from blindtest.transport.endpoint import Endpoint
from blindtest.transport.keynames import similar_name, unset_line
from blindtest.transport.retry import RetryPolicy
from blindtest.transport.wire import ChatMessage

__all__ = [
    "CHECK_PROMPT",
    "CHECK_TOKENS",
    "CheckLine",
    "CheckResult",
    "EndpointCheck",
    "Target",
    "check_targets",
]

#: The small request: a short prompt, a token cap of a few tokens.
CHECK_PROMPT = "Reply with the single word: ready"
CHECK_TOKENS = 16
#: Seconds to wait for each answer of the check (a model loading may take a while).
CHECK_TIMEOUT = 60.0

#: Where servers put a model's context in ``GET /models``.
_CONTEXT_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length")

OK, FAIL, NOTE, UNKNOWN = "ok", "FAIL", "note", "--"


@dataclass(frozen=True, slots=True)
class Target:
    """One endpoint to check: ``role`` (``A``, ``B``, ``launder``, ``judge``), ``title``
    (how the lines name it), its endpoint, the messages of the small request (the side's
    system prompt and template around :data:`CHECK_PROMPT`), the longest prompt it will be
    sent (estimated tokens, with the token cap of its answers), the whole run's estimate
    (``input_tokens``, ``output_tokens``, ``cost`` when priced) and the option that prices
    it; ``seed``, ``response_format``: as the run sends them."""

    role: str
    title: str
    endpoint: Endpoint
    messages: Sequence[ChatMessage]
    longest_tokens: int
    output_tokens: int | None
    estimate: Mapping[str, float] | None
    price_option: str
    seed: int | None = None
    response_format: Mapping[str, object] | None = None
    #: The run asks in plain text when the server refuses ``response_format`` (an LLM judge).
    format_optional: bool = False
    #: What the longest request is, as the context line names it ("prompt p003").
    longest_name: str = "prompt"


@dataclass(frozen=True, slots=True)
class CheckLine:
    """One line: what was checked (``aspect``), ``ok``, ``FAIL``, ``note`` or ``--``
    (not known, not tried), and what was found."""

    aspect: str
    status: str
    text: str


@dataclass(frozen=True, slots=True)
class EndpointCheck:
    """The lines of one endpoint, in the order of :data:`ASPECTS`."""

    role: str
    title: str
    lines: tuple[CheckLine, ...]

    @property
    def failed(self) -> list[str]:
        return [line.aspect for line in self.lines if line.status == FAIL]


@dataclass(frozen=True, slots=True)
class CheckResult:
    """Every endpoint's lines; ``ok`` when none failed."""

    endpoints: tuple[EndpointCheck, ...]

    @property
    def ok(self) -> bool:
        return not any(check.failed for check in self.endpoints)

    def failure(self) -> EndpointFailed:
        """The exit-3 error naming what failed, and that nothing was written."""
        named = "; ".join(
            f"{check.title.split(':')[0]}: {', '.join(check.failed)}"
            for check in self.endpoints
            if check.failed
        )
        return EndpointFailed(f"check failed ({named}); nothing was written to the run")


ASPECTS = ("key", "url", "model", "context", "params", "cost")


@dataclass
class _Lines:
    found: dict[str, CheckLine] = field(default_factory=dict)
    #: The model names ``GET /models`` listed, for a model line that fails to name them.
    models: list[str] = field(default_factory=list)

    def set(self, aspect: str, status: str, text: str) -> None:
        if aspect in self.found and self.found[aspect].status == FAIL:
            return  # the first failure of an aspect is the one to fix
        self.found[aspect] = CheckLine(aspect, status, text)

    def done(self, target: Target) -> EndpointCheck:
        lines = tuple(
            self.found.get(aspect, CheckLine(aspect, UNKNOWN, "not tried")) for aspect in ASPECTS
        )
        return EndpointCheck(target.role, target.title, lines)


def _bare(error: BaseException) -> str:
    """An endpoint error without its ``side A (model at URL): `` head (the block names it)."""
    text = str(error)
    head, sep, rest = text.partition("): ")
    return rest if sep and head.count("(") == 1 else text


def _key_line(target: Target, lines: _Lines) -> bool:
    """The key line; False when no request can be sent (a remote URL without its key)."""
    endpoint = target.endpoint
    name = endpoint.key_env or endpoint.unset_key_env
    if name is None:
        lines.set("key", UNKNOWN, "no key variable named: asked without a key")
        return True
    if endpoint.key_env is not None and _is_set(name):
        lines.set("key", OK, f"{name} is set")
        return True
    if endpoint.key_env is not None or similar_name(name) is not None:
        text = unset_line(target.role, name, endpoint.model).partition(": ")[2]
        lines.set("key", FAIL, text)
        return False
    lines.set("key", NOTE, f"{name} is not set: this local server is asked without a key")
    return True


def _is_set(name: str) -> bool:
    import os

    return bool(os.environ.get(name))


def _context_of(entry: Mapping[str, Any]) -> int | None:
    for key in _CONTEXT_KEYS:
        value = entry.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    top = entry.get("top_provider")  # OpenRouter also says it per provider
    if isinstance(top, Mapping):
        return _context_of(top)
    return None


def _listed(data: object) -> list[Mapping[str, Any]]:
    items = data.get("data") if isinstance(data, Mapping) else None
    if not isinstance(items, list):
        items = data.get("models") if isinstance(data, Mapping) else None
    return [item for item in items or [] if isinstance(item, Mapping)]


async def _props_context(client: ChatClient, role: str) -> int | None:
    """llama.cpp's ``n_ctx`` from ``GET /props`` at the server's root."""
    try:
        status, data = await client.get_json(role, "/props", root=True)
    except EndpointFailed:
        return None
    if status != 200 or not isinstance(data, Mapping):
        return None
    settings = data.get("default_generation_settings")
    for source in (settings, data):
        if isinstance(source, Mapping):
            value = source.get("n_ctx")
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


async def _models(client: ChatClient, target: Target, lines: _Lines) -> tuple[bool, int | None]:
    """The URL and model lines from ``GET /models``; (reachable, the context it reports)."""
    endpoint = target.endpoint
    try:
        status, data = await client.get_json(target.role, "/models")
    except EndpointFailed as error:
        lines.set("url", FAIL, _bare(error))
        return False, None
    if status == 404 and not _has_api_prefix(endpoint.base_url):
        base = endpoint.base_url.rstrip("/")
        lines.set(
            "url",
            FAIL,
            f"GET {base}/models answered HTTP 404: the base URL lacks the API prefix; try "
            f"{base}/v1",
        )
        return False, None
    lines.set("url", OK, f"reachable (GET /models answered HTTP {status})")
    if status in (401, 403):
        if endpoint.key_env:
            said = f"the server refused the key in {endpoint.key_env} (HTTP {status})"
        else:
            wanted = endpoint.unset_key_env or "a variable"
            said = f"the server wants a key (HTTP {status}): export {wanted} with it"
        lines.set("key", FAIL, said)
        return True, None
    listed = _listed(data) if status == 200 else []
    lines.models = [str(item.get("id")) for item in listed]
    entry = next((item for item in listed if item.get("id") == endpoint.model), None)
    context = _context_of(entry) if entry is not None else None
    if context is None and is_llama_cpp(listed, endpoint):
        context = await _props_context(client, target.role)
    if entry is not None:
        lines.set("model", OK, f"{endpoint.model} is listed by the server")
    elif listed:
        lines.set(
            "model",
            NOTE,
            f"{endpoint.model} is not among the models the server lists: {_names(lines.models)}",
        )
    else:
        lines.set("model", UNKNOWN, f"the server lists no models (HTTP {status})")
    return True, context


def _names(models: Sequence[str]) -> str:
    """The models a server lists, for a person to pick from (the first 12 named)."""
    shown = ", ".join(models[:12])
    return shown + (f" and {len(models) - 12} more" if len(models) > 12 else "")


def _has_api_prefix(base_url: str) -> bool:
    """Whether the base URL's path names an API version (``/v1``, ``/openai/v1``, ``/v1beta``)."""
    path = urlsplit(base_url).path.rstrip("/")
    return bool(re.search(r"/v\d[\w.]*$", path))


def is_llama_cpp(listed: Sequence[Mapping[str, Any]], endpoint: Endpoint) -> bool:
    """Whether ``/props`` is worth asking: llama.cpp lists its model as owned by
    ``llamacpp`` (with ``meta``), and any local server may be one."""
    if any(item.get("owned_by") == "llamacpp" or "meta" in item for item in listed):
        return True
    return is_loopback(endpoint.base_url)


def _context_line(target: Target, context: int | None, lines: _Lines) -> None:
    tokens = target.longest_tokens
    out = target.output_tokens
    cap = f" + up to {out:,} out" if out else ""
    if context is None:
        lines.set(
            "context",
            UNKNOWN,
            f"longest {target.longest_name} ~{tokens:,} tokens{cap}; context not reported by "
            "the server",
        )
        return
    said = f"longest {target.longest_name} ~{tokens:,} tokens{cap}, context {context:,}"
    if tokens > context:
        lines.set(
            "context",
            FAIL,
            f"{said}: too long for the model; shorten or leave out that prompt, or give the "
            "server a larger context",
        )
    elif out and tokens + out > context:
        lines.set("context", NOTE, f"{said}: its longest answers may be cut (or refused)")
    else:
        lines.set("context", OK, said)


def _cost_line(target: Target, lines: _Lines) -> None:
    estimate = target.estimate
    if estimate is None:
        lines.set("cost", UNKNOWN, "no estimate")
        return
    bound = "~" if target.role == "judge" else "<= "  # a judge's answers have no cap
    made = estimate["output_tokens"]
    tokens = f"~{estimate['input_tokens']:,.0f} in, {bound}{made:,.0f} out tokens"
    if "cost" in estimate:
        lines.set("cost", OK, f"about ${estimate['cost']:,.2f} for the whole run ({tokens})")
    else:
        gap = "" if target.price_option.endswith("=") else " "  # --price NAME=IN,OUT
        option = f" ({target.price_option}{gap}IN,OUT)" if target.price_option else ""
        lines.set("cost", UNKNOWN, f"unknown: no price{option}; {tokens}")


def _small(endpoint: Endpoint) -> Endpoint:
    """The endpoint with its answer capped at :data:`CHECK_TOKENS` (also where the side sets
    the cap among its extra parameters), every other parameter as the run sends it."""
    extra = dict(endpoint.extra or {})
    for name in ("max_tokens", "max_completion_tokens"):
        if extra.get(name) is not None:
            extra[name] = CHECK_TOKENS
    return replace(endpoint, max_tokens=CHECK_TOKENS, extra=extra or None)


def _params_said(endpoint: Endpoint, seeded: bool, sends_seed: bool) -> str:
    body = endpoint.request_body([{"role": "user", "content": ""}])
    names = [
        f"{name} {body[name]}" if name in ("temperature", "top_p") else name
        for name in body
        if name not in ("model", "messages", "max_tokens", "max_completion_tokens")
    ]
    names.append(endpoint.max_tokens_field)
    if seeded:
        names.append("seed" if sends_seed else "")
    said = "accepted: " + ", ".join(n for n in names if n)
    if seeded and not sends_seed:
        said += "; seed refused: the run asks without one (answers not reproducible)"
    return said


def _refuses_format(error: EndpointRejected) -> bool:
    """A 400/422 naming ``response_format``, or naming no parameter (llama.cpp's grammar
    failure): the LLM judge then asks in plain text, as it does in a run."""
    if error.status not in (400, 422) or isinstance(error, PromptTooLong):
        return False
    return error.param in (None, "response_format")


async def _ask(client: ChatClient, target: Target, lines: _Lines) -> Any:
    """The small request; an optional ``response_format`` the server refuses is a note, and
    the request is made again without it."""
    try:
        return await client.complete(
            target.role, target.messages, seed=target.seed, response_format=target.response_format
        )
    except EndpointRejected as error:
        if not (target.format_optional and target.response_format and _refuses_format(error)):
            raise
    lines.set(
        "params", NOTE, "response_format refused: the judge asks in plain text, as a run does"
    )
    return await client.complete(target.role, target.messages, seed=target.seed)


def _rejected(error: EndpointRejected, endpoint: Endpoint, lines: _Lines) -> None:
    """The small request refused: a 404 is the model (named with those the server lists),
    anything else the parameters."""
    aspect = "model" if error.status == 404 else "params"
    said = _bare(error)
    if aspect == "model" and lines.models and endpoint.model not in lines.models:
        said += f"; the server lists: {_names(lines.models)}"
    lines.set(aspect, FAIL, said)


async def _complete(client: ChatClient, target: Target, lines: _Lines) -> None:
    endpoint = client.endpoint(target.role)
    try:
        done = await _ask(client, target, lines)
    except AuthFailed as error:
        lines.set("key", FAIL, _bare(error))
        return
    except QuotaExceeded as error:
        lines.set("key", FAIL, _bare(error))
        return
    except PromptTooLong as error:
        lines.set("context", FAIL, "the small request itself: " + _bare(error))
        return
    except (ConnectionRefused, ConnectTimeout, EndpointUnreachable) as error:
        lines.set("url", FAIL, _bare(error))
        return
    except EndpointRejected as error:
        _rejected(error, endpoint, lines)
        return
    except BadInput as error:
        lines.set("key", FAIL, str(error).partition(": ")[2] or str(error))
        return
    if done.status is None or not 200 <= done.status < 300:
        said = _bare(Exception(done.error)) if done.error else f"no answer ({done.kind})"
        lines.set("url", FAIL, said)
        return
    answered = done.model or "no model name"
    model = lines.found.get("model")
    head = model.text if model is not None and model.status == OK else endpoint.model
    if done.model is not None and done.model != endpoint.model:
        lines.set(
            "model",
            NOTE,
            f"{endpoint.model} asked, {done.model} answers (a server of one model answers "
            "any name)",
        )
    else:
        lines.set("model", OK, f"{head}; answers as {answered}")
    said = _params_said(endpoint, target.seed is not None, client.sends_seed(target.role))
    refused = lines.found.get("params")
    if refused is not None:  # response_format refused, the rest taken
        lines.found["params"] = CheckLine("params", NOTE, f"{said}; {refused.text}")
    else:
        shaped = ", response_format" if target.response_format is not None else ""
        lines.set("params", OK, said + shaped)


async def _check_one(client: ChatClient, target: Target) -> EndpointCheck:
    lines = _Lines()
    can_send = _key_line(target, lines)
    reachable, context = await _models(client, target, lines)
    _context_line(target, context, lines)
    _cost_line(target, lines)
    key = lines.found.get("key")
    if reachable and can_send and (key is None or key.status != FAIL):
        await _complete(client, target, lines)
    return lines.done(target)


async def _check_all(targets: Sequence[Target], timeout: float) -> CheckResult:
    endpoints = {}
    for target in targets:
        endpoint = _small(target.endpoint)
        name = endpoint.key_env
        if name is not None and not _is_set(name):
            endpoint = replace(endpoint, key_env=None, unset_key_env=name)  # asked without
        endpoints[target.role] = endpoint
    async with ChatClient(
        endpoints,
        concurrency=1,
        timeout=timeout,
        policy=RetryPolicy(max_retries=1),
    ) as client:
        checks = await asyncio.gather(*(_check_one(client, target) for target in targets))
    return CheckResult(tuple(checks))


def check_targets(targets: Sequence[Target], timeout: float = CHECK_TIMEOUT) -> CheckResult:
    """Check every target at once (one small request each); the lines, never raising for
    what an endpoint answers."""
    return asyncio.run(_check_all(targets, timeout))
