"""Batch files: OpenAI's Batch API input and output lines (the format ``vllm run-batch`` reads
and writes too) and Anthropic's Message Batches requests and results.

Pure: no socket, no file, no stage. A stage hands in ``(custom_id, body)`` pairs where
``body`` is the exact chat-completions body a live run would send
(:func:`blindtest.transport.wire.request_body`), and reads results back as :class:`BatchResult`
records whose ``completion`` is the same :class:`~blindtest.transport.wire.ParsedCompletion` a live
answer is read into. bt-generate uses it for slots; an LLM judge can use it unchanged for its
comparisons (its own ``part`` letter in :func:`custom_id`, e.g. ``"p"`` for a pass).

custom_id. ``bt-<16 hex of the design hash>-t<trial>-<part><number>``, e.g.
``bt-3f2a9c0d1b2e4f56-t12-s3`` (trial 12, slot 3); an LLM judge's pass adds its judge
model and body (``bt-...-t12-p2-j<8 hex>-h<8 hex>``,
:mod:`blindtest.judging.llm.batch_requests`): at most 64 characters of
``[a-zA-Z0-9_-]``, so one id suits both OpenAI and Anthropic, and a result carries the run it
belongs to (:func:`parse_custom_id`).

Formats (as published, checked against OpenAI's ``BatchRequestOutput`` and vLLM's
``vllm/entrypoints/openai/run_batch.py`` / ``protocol.py``): an input line is
``{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}``; an output or error
line is ``{"id", "custom_id", "response": {"status_code", "request_id", "body"} | null,
"error": {"code", "message"} | null}`` (vLLM's ``error`` may be a plain string). Anthropic's
request is ``{"custom_id", "params": {model, max_tokens, messages, system?, temperature?,
top_p?}}``; a result is ``{"custom_id", "result": {"type": "succeeded", "message": {...}} |
{"type": "errored", "error": {...}} | {"type": "canceled"} | {"type": "expired"}}``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import orjson

from blindtest.errors import BadInput
from blindtest.reportfmt import count
from blindtest.transport.wire import ParsedCompletion, ServerError, parse_completion, parse_error

if TYPE_CHECKING:
    from blindtest.transport.client import Completion, CompletionKind

__all__ = [
    "ANTHROPIC_DEFAULT_MAX_TOKENS",
    "CHAT_URL",
    "FORMATS",
    "MAX_FILE_BYTES",
    "MAX_REQUESTS",
    "BatchResult",
    "CustomId",
    "Triage",
    "anthropic_line",
    "custom_id",
    "openai_line",
    "parse_custom_id",
    "read_results",
    "request_lines",
    "split_parts",
    "triage",
]

BatchFormat = Literal["openai", "anthropic"]
FORMATS: tuple[str, ...] = ("openai", "anthropic")
CHAT_URL = "/v1/chat/completions"
#: OpenAI's limits per batch input file (Anthropic's are 100,000 requests / 256 MB: these fit).
MAX_REQUESTS = 50_000
MAX_FILE_BYTES = 200 * 1024 * 1024
#: Anthropic requires ``max_tokens``; a design that sets none gets this cap in that format.
ANTHROPIC_DEFAULT_MAX_TOKENS = 4096

_ID = re.compile(
    r"^bt-(?P<run>[0-9a-f]{16})-t(?P<trial>[1-9][0-9]*)-(?P<part>[a-z])(?P<n>[0-9]+)"
    r"(?:-j(?P<judge>[0-9a-f]{8})-h(?P<body>[0-9a-f]{8}))?$"
)


@dataclass(frozen=True, slots=True)
class CustomId:
    """What a custom_id names: the run (16 hex of the design hash), a trial, and a numbered
    part of it (``part`` ``"s"``: a slot)."""

    run: str
    trial: int
    part: str
    number: int
    #: An LLM judge's request (part ``"p"``, a pass): 8 hex of the judge model's name and
    #: 8 hex of the request body, so a result is never imported for another judge or prompt.
    judge: str | None = None
    body: str | None = None


def custom_id(design_sha256: str, trial: int, number: int, part: str = "s") -> str:
    """The custom_id of ``part`` ``number`` of ``trial`` in the run of ``design_sha256``."""
    return f"bt-{design_sha256[:16]}-t{trial}-{part}{number}"


def parse_custom_id(text: object) -> CustomId | None:
    """A custom_id read back, or None when it is not one blindtest wrote."""
    found = _ID.match(text) if isinstance(text, str) else None
    if found is None:
        return None
    return CustomId(
        found["run"],
        int(found["trial"]),
        found["part"],
        int(found["n"]),
        found["judge"],
        found["body"],
    )


# --------------------------------------------------------------------------------------------
# Export


def openai_line(cid: str, body: Mapping[str, object]) -> dict[str, object]:
    """One OpenAI batch input line: the exact chat-completions body, posted to ``CHAT_URL``."""
    return {"custom_id": cid, "method": "POST", "url": CHAT_URL, "body": dict(body)}


def anthropic_line(cid: str, body: Mapping[str, Any]) -> dict[str, object]:
    """One Anthropic Message Batches request for a chat-completions ``body``: system messages
    go to ``system``; the token cap (either field) to ``max_tokens`` (required there, so
    :data:`ANTHROPIC_DEFAULT_MAX_TOKENS` without one); ``temperature`` and ``top_p`` as they
    are. Anthropic takes no ``seed``: slots differ by sampling alone in this format."""
    system = [m["content"] for m in body["messages"] if m["role"] == "system"]
    params: dict[str, object] = {
        "model": body["model"],
        "max_tokens": body.get("max_tokens")
        or body.get("max_completion_tokens")
        or ANTHROPIC_DEFAULT_MAX_TOKENS,
        "messages": [dict(m) for m in body["messages"] if m["role"] != "system"],
    }
    if system:
        params["system"] = "\n\n".join(system)
    for name in ("temperature", "top_p"):
        if body.get(name) is not None:
            params[name] = body[name]
    return {"custom_id": cid, "params": params}


def request_lines(
    requests: Iterable[tuple[str, Mapping[str, Any]]], fmt: str = "openai"
) -> list[bytes]:
    """Each ``(custom_id, body)`` as one JSONL line (with its newline) in format ``fmt``."""
    make = anthropic_line if fmt == "anthropic" else openai_line
    return [orjson.dumps(make(cid, body)) + b"\n" for cid, body in requests]


def split_parts(
    lines: Sequence[bytes], max_requests: int | None = None, max_bytes: int | None = None
) -> list[list[bytes]]:
    """``lines`` cut into files of at most ``max_requests`` lines and ``max_bytes`` bytes
    (default :data:`MAX_REQUESTS`, :data:`MAX_FILE_BYTES`), in order (one line larger than
    ``max_bytes`` is refused)."""
    max_requests = MAX_REQUESTS if max_requests is None else max_requests
    max_bytes = MAX_FILE_BYTES if max_bytes is None else max_bytes
    parts: list[list[bytes]] = []
    current: list[bytes] = []
    size = 0
    for line in lines:
        if len(line) > max_bytes:
            raise BadInput(f"one batch request is {len(line)} bytes, over the {max_bytes} limit")
        if current and (len(current) >= max_requests or size + len(line) > max_bytes):
            parts.append(current)
            current, size = [], 0
        current.append(line)
        size += len(line)
    if current:
        parts.append(current)
    return parts


# --------------------------------------------------------------------------------------------
# Import


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One result line read back: where it was (``source``, 1-based ``line``), its
    ``custom_id``, and either a ``completion`` (a 2xx body, read as a live answer is) or a
    failure: the HTTP ``status`` when there was one, ``said`` (the error's structure) and
    ``not_run`` when the request never ran (batch expired or cancelled)."""

    source: str
    line: int
    custom_id: str
    completion: ParsedCompletion | None = None
    status: int | None = None
    said: ServerError | None = None
    not_run: bool = False
    fmt: str = "openai"


_NOT_RUN_CODES = frozenset({"batch_expired", "batch_cancelled", "batch_canceled"})


def _openai_result(source: str, number: int, record: Mapping[str, Any]) -> BatchResult:
    cid = str(record.get("custom_id"))
    response = record.get("response")
    error = record.get("error")
    if isinstance(response, dict) and isinstance(response.get("status_code"), int):
        status = response["status_code"]
        body = response.get("body")
        payload = orjson.dumps(body) if body is not None else b""
        if 200 <= status < 300 and body is not None:
            return BatchResult(source, number, cid, parse_completion(payload), status)
        said = parse_error(payload) if body is not None else _said(error, f"HTTP {status}")
        return BatchResult(source, number, cid, status=status, said=said)
    said = _said(error, "no response and no error")
    return BatchResult(source, number, cid, said=said, not_run=said.code in _NOT_RUN_CODES)


def _said(error: object, fallback: str) -> ServerError:
    if isinstance(error, dict):
        message, code = error.get("message"), error.get("code")
        return ServerError(
            message if isinstance(message, str) else fallback,
            code=str(code) if isinstance(code, (str, int)) and code is not None else None,
        )
    if isinstance(error, str) and error:
        return ServerError(error)  # vLLM run-batch writes the message as a string
    return ServerError(fallback)


_STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "stop"}


def _anthropic_result(source: str, number: int, record: Mapping[str, Any]) -> BatchResult:
    cid = str(record.get("custom_id"))
    result = record.get("result")
    kind = result.get("type") if isinstance(result, dict) else None
    if kind in ("canceled", "expired"):
        said = ServerError(f"the batch request was {kind}", code=f"batch_{kind}")
        return BatchResult(source, number, cid, said=said, not_run=True, fmt="anthropic")
    if kind == "errored":
        error = result.get("error") if isinstance(result, dict) else None
        inner = error.get("error") if isinstance(error, dict) else None
        said = _said(inner if isinstance(inner, dict) else error, "errored")
        if isinstance(inner, dict) and isinstance(inner.get("type"), str):
            said = ServerError(said.message, code=said.code, type=inner["type"])
        return BatchResult(source, number, cid, said=said, fmt="anthropic")
    message = result.get("message") if isinstance(result, dict) else None
    if kind != "succeeded" or not isinstance(message, dict):
        raise BadInput(f"{source}:{number}: not an Anthropic batch result (result.type {kind!r})")
    return BatchResult(
        source, number, cid, parse_completion(_as_chat(message)), 200, fmt="anthropic"
    )


def _as_chat(message: Mapping[str, Any]) -> bytes:
    """An Anthropic ``message`` as the chat-completions body it corresponds to, so that one
    reader (:func:`blindtest.transport.wire.parse_completion`) classifies both."""
    blocks = message.get("content")
    text = "".join(
        b["text"] for b in blocks or [] if isinstance(b, dict) and isinstance(b.get("text"), str)
    )
    stop = message.get("stop_reason")
    finish = "content_filter" if stop == "refusal" else _STOP.get(str(stop), stop)
    usage = message.get("usage") if isinstance(message.get("usage"), dict) else {}
    assert isinstance(usage, dict)
    prompt, completion = usage.get("input_tokens"), usage.get("output_tokens")
    body: dict[str, Any] = {
        "id": message.get("id"),
        "model": message.get("model"),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}
        ],
    }
    if isinstance(prompt, int) and isinstance(completion, int):
        body["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    return orjson.dumps(body)


def read_results(data: bytes, source: str) -> Iterator[BatchResult]:
    """Every result line of one output or error file, either format (told line by line: an
    Anthropic result has ``result``, an OpenAI one ``response``/``error``). A line that is
    not JSON, or not a result, is ``BadInput`` naming the file and line."""
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise BadInput(f"{source}:{number}: not JSON; is this a batch output file?") from None
        if not isinstance(record, dict) or "custom_id" not in record:
            raise BadInput(f"{source}:{number}: no custom_id; is this a batch output file?")
        if "result" in record:
            yield _anthropic_result(source, number, record)
        elif "response" in record or "error" in record:
            yield _openai_result(source, number, record)
        else:
            raise BadInput(
                f"{source}:{number}: a batch input line, not a result (no response or result)"
            )


# --------------------------------------------------------------------------------------------
# Import, against what the run holds already


@dataclass(slots=True)
class Triage:
    """Results sorted against what a run already holds (:func:`triage`): the ``fresh`` ones to
    import, in file order, and the ones skipped: ``same`` (already imported with this very
    content: an interrupted import run again), ``differs`` (the unit is already answered with
    another result, e.g. another batch's: the stored answer stands), ``repeated`` (given twice
    in these files with the same content: read once)."""

    fresh: list[BatchResult] = field(default_factory=list)
    same: int = 0
    differs: int = 0
    repeated: int = 0

    def summary(self, unit: str = "") -> str:
        """What was skipped, for the closing line ("" when nothing was); ``unit`` names what
        is counted (singular) when the line counts something else ("result" beside
        "comparisons")."""
        said = []

        def counted(n: int) -> str:
            return count(n, unit) if unit else str(n)

        if self.same:
            said.append(f"{counted(self.same)} already imported, skipped")
        if self.differs:
            said.append(
                f"{self.differs} already answered with a different result; the stored answers stand"
            )
        if self.repeated:
            said.append(f"{self.repeated} given twice in these files, read once")
        return "; ".join(said)


#: ``place(result)``: ``("ok", key, label)`` for a result this run can take (``key`` the unit
#: it answers, ``label`` its name for a message: "trial 3 slot 2"), else ``(category, None,
#: why)`` with the refusal's category ("foreign", "unknown", ...) and its words.
Place = Callable[[BatchResult], tuple[str, Hashable, str]]
#: ``content(key, result)``: what the result says, comparable with what ``stored`` holds.
Content = Callable[[Hashable, BatchResult], Hashable]
#: ``stored(key)``: whether the unit is answered already, and the contents stored for it
#: (answers and failure rows alike).
Stored = Callable[[Hashable], tuple[bool, Collection[Hashable]]]


def _answers(result: BatchResult) -> bool:
    return result.completion is not None and result.completion.ok


def triage(
    results: Iterable[BatchResult],
    *,
    place: Place,
    content: Content,
    stored: Stored,
    refusal: Callable[[Mapping[str, int], str], str],
) -> Triage:
    """Sort the results of an import (bt-generate's slots, an LLM judge's passes; the
    ``--batch`` collect importing its own batch again after an interruption).

    Refused, the whole import (``BadInput`` worded by ``refusal(counts, first)``; the counts by
    category, "twice" among them): any result ``place`` refuses (another run, an unknown unit,
    a request this run would not send), and a unit answered twice in these files with
    different contents. Skipped with a count (:class:`Triage`): a result whose content is
    stored already, one for a unit already answered (the stored answer stands: replacing it
    could change what a judge already saw), and a repeat of a result in these files. A result
    that never ran for an answered unit is dropped. The rest is ``fresh``.
    """
    refused: Counter[str] = Counter()
    first = ""
    placed: list[tuple[Hashable, str, BatchResult]] = []
    for result in results:
        category, key, label = place(result)
        if category == "ok":
            placed.append((key, label, result))
        else:
            refused[category] += 1
            first = first or label
    count = Counter(key for key, _, _ in placed)
    twice, also = _answered_twice(placed, count, content)
    if twice:
        refused["twice"] += twice
        first = first or also
    if refused:
        raise BadInput(refusal(refused, first))
    return _sort(placed, count, content, stored)


def _answered_twice(
    placed: Sequence[tuple[Hashable, str, BatchResult]],
    count: Mapping[Hashable, int],
    content: Content,
) -> tuple[int, str]:
    """How many results answer a unit again with another content, and the first's words."""
    answered: dict[Hashable, set[Hashable]] = {}
    twice, first = 0, ""
    for key, label, result in placed:
        if count[key] > 1 and _answers(result):
            seen = answered.setdefault(key, set())
            seen.add(content(key, result))
            if len(seen) > 1:
                twice += 1
                first = first or (
                    f"{result.source}:{result.line} answers {label} again with a different result"
                )
    return twice, first


def _sort(
    placed: Sequence[tuple[Hashable, str, BatchResult]],
    count: Mapping[Hashable, int],
    content: Content,
    stored: Stored,
) -> Triage:
    sorted_ = Triage()
    kept: dict[Hashable, set[Hashable]] = {}
    answered_here: set[Hashable] = set()
    for key, _, result in placed:
        done, contents = stored(key)
        if result.not_run:
            if not done:
                sorted_.fresh.append(result)  # the importer counts it as never run
            continue
        said = content(key, result) if contents or count[key] > 1 else None
        if said is not None and said in kept.get(key, ()):
            sorted_.repeated += 1
        elif said is not None and said in contents:
            sorted_.same += 1
        elif done or key in answered_here:
            sorted_.differs += 1
        else:
            sorted_.fresh.append(result)
            if said is not None:
                kept.setdefault(key, set()).add(said)
            if _answers(result):
                answered_here.add(key)
    return sorted_


def result_completion(result: BatchResult, role: str, *, seed: int | None = None) -> Completion:
    """A batch result as the :class:`~blindtest.transport.client.Completion` a live call
    returns (one attempt, untimed): an answer read as a live answer is, a failure with the kind
    a live call's status would give it (429 rate limited, 5xx/408/409 server error, else
    rejected)."""
    from blindtest.transport.client import Completion

    parsed = result.completion
    if parsed is not None:
        return Completion(
            role,
            parsed.kind,
            parsed.text if parsed.ok else "",
            parsed.finish_reason,
            parsed.usage,
            0.0,
            1,
            result.status,
            model=parsed.model,
            refused=parsed.kind == "refusal",
            refusal=parsed.refusal,
            truncated=parsed.truncated,
            response_id=parsed.response_id,
            error=None if parsed.ok else f"batch result: {parsed.detail}",
            seed=seed,
            reasoning=parsed.reasoning,
        )
    status = result.status
    kind: CompletionKind = (
        "rate_limited"
        if status == 429
        else "server_error"
        if status is None or status >= 500 or status in (408, 409)
        else "rejected"
    )
    said = (result.said or ServerError("failed")).message
    shown = f"HTTP {status}: " if status is not None else ""
    return Completion(
        role, kind, "", None, None, 0.0, 1, status, error=f"batch result: {shown}{said}", seed=seed
    )
