"""An LLM judge's bookkeeping of the passes of each comparison: what one pass asked and got, the
passes a picks file already holds (kept on a rerun rather than paid for again), the per-trial
ledger, and the small readings of a pass (which option it showed first, which side it chose).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from blindtest.errors import EndpointRejected, PromptTooLong
from blindtest.judging.driver import Answer
from blindtest.judging.llm.messages import _mapping, input_context
from blindtest.judging.llm.verdicts import validate_verdict
from blindtest.model.picks import JudgeRun


@dataclass(slots=True)
class _Asked:
    """One verdict asked for: the verdict (None: failed), the last raw text, attempts, tokens."""

    verdict: dict[str, Any] | None
    raw: str
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str = ""
    #: Paid for in an earlier sitting (a stored answer), not asked in this one.
    reused: bool = False


#: A failure row's field holding the one answered pass of a position swap whose other pass
#: got no answer: ``{"pass", "raw_response", "attempts", "tokens"}``. Never a pick; a rerun
#: takes its answer instead of asking that pass again.
ANSWERED_PASS = "answered_pass"


def _answered_pass(number: int, asked: _Asked) -> dict[str, Any]:
    return {
        "pass": number,
        "raw_response": asked.raw,
        "attempts": asked.attempts,
        "tokens": {"prompt": asked.prompt_tokens, "completion": asked.completion_tokens},
    }


def _stored_pass(protocol: str, stored: Mapping[str, Any]) -> _Asked | None:
    """A pass answered in an earlier sitting (a pick record, or a failure row's
    :data:`ANSWERED_PASS`), as asked again: its verdict read back from the raw answer, its
    attempts and tokens as recorded. None when it holds no valid verdict."""
    raw = stored.get("raw_response")
    if not isinstance(raw, str):
        return None
    verdict, _ = validate_verdict(protocol, raw)
    if verdict is None:
        return None
    tokens = stored.get("tokens")
    tokens = tokens if isinstance(tokens, Mapping) else {}
    return _Asked(
        verdict,
        raw,
        attempts=int(stored.get("attempts") or 0),
        prompt_tokens=int(tokens.get("prompt") or 0),
        completion_tokens=int(tokens.get("completion") or 0),
        reused=True,
    )


@dataclass
class _Ledger:
    requests: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    leaks: list[int] = field(default_factory=list)


def _refuses_response_format(error: EndpointRejected) -> bool:
    """Whether a rejection may be the server refusing structured output: a 400 or 422 naming
    ``response_format`` (its ``param``, or its words), or any other 400 that names no other
    parameter, in the server's own words (llama.cpp's "Failed to initialize samplers" when it
    cannot build the grammar). The request is then tried once without it."""
    if error.status not in (400, 422) or isinstance(error, PromptTooLong):
        return False
    if getattr(error, "param", None) is not None:
        return bool(error.param == "response_format")
    said = getattr(error, "server_message", "") or str(error)
    return error.status == 400 or re.search(r"\bresponse_format\b", said) is not None


class _Halted(Exception):
    """A comparison not asked because an earlier request stopped the judge (``LlmJudge._halt``)."""


def _settle(future: concurrent.futures.Future[Answer], task: asyncio.Task[Answer]) -> None:
    """Hand a comparison's outcome from the loop's task to the driver's future."""
    if task.cancelled():
        future.cancel()
    elif task.exception() is not None:
        future.set_exception(task.exception())
    else:
        future.set_result(task.result())


def _shown(run: JudgeRun, number: int) -> tuple[str, tuple[str, ...]]:
    trial = run.view.trials[number - 1]
    return input_context(trial), trial.options


def _side(preference: str, swapped: bool) -> str:
    """A preference verdict ("A", "B", "TIE") in the trial's own order."""
    if preference == "TIE":
        return "tie"
    return _mapping(swapped)[preference]
