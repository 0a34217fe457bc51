"""The LLM judge (spec 003): a model asked, through
:class:`blindtest.generation.client.ChatClient`, to
judge the blinded trials with a strict JSON verdict; one more ``Judge`` for the driver.

It owns the verdict schemas and their parsing (a fenced or bare JSON object, validated with
jsonschema, asked again up to three times with backoff when malformed), the structured-output
fallback (``response_format`` until the endpoint refuses it by a 400, then plain text), the stop
at the first failure that would repeat for every comparison (a refused key, nothing listening),
the position swap of a preference comparison (both raw verdicts kept; the pass-1 record's pick is
the comparison's verdict after the swap and confidence rules), and what each record stores.

It works ahead: at its first turn it starts every remaining comparison (pair: one at a time,
each trial's conversation holds the judge's earlier answers) on an event loop of its own
thread; the driver still records in trial order. It sees only the blinded view; it never
reads the arrangement, and no key reaches a record (the client reads it per request).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import math
import os
import re
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

if TYPE_CHECKING:
    import jsonschema

from blindtest.endpoints import is_loopback
from blindtest.errors import BadInput, EndpointFailed, EndpointRejected, PromptTooLong
from blindtest.generation.client import ChatClient, Completion
from blindtest.generation.endpoint import Endpoint
from blindtest.generation.retry import DEFAULT_POLICY, RetryPolicy
from blindtest.generation.wire import ChatMessage
from blindtest.judging.driver import (
    Answer,
    Failed,
    Halt,
    JudgeKind,
    JudgeSetup,
    JudgingResult,
    Turn,
)
from blindtest.judging.llm import prompts
from blindtest.judging.picks import SETTINGS_HASH_FIELD, settings_sha256
from blindtest.judgment import JudgeRun, Pick, Trial, judge_nicknames
from blindtest.keynames import check_key_names

__all__ = [
    "DEFAULT_KEY_ENVS",
    "VERDICT_RETRIES",
    "LlmJudge",
    "LlmOptions",
    "check_judge_key",
    "check_key",
    "check_run",
    "extract_json",
    "llm_kind",
    "parse_price",
    "response_format",
    "show_prompt",
    "validate_verdict",
]

DEFAULT_KEY_ENVS = ("BLINDTEST_JUDGE_KEY", "OPENAI_API_KEY")
DEFAULT_URL = "https://api.openai.com/v1"
#: Spec 003: "cap retries at three attempts before logging a failure and moving on".
VERDICT_RETRIES = 3
_LEAK = {
    "identity_leakage_detected": {"type": "boolean"},
    "identity_leakage_details": {"type": "string"},
}
_COMMON = {
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "justification": {"type": "string"},
    "key_differentiators": {"type": "array", "items": {"type": "string"}},
    **_LEAK,
}
VERDICT_SCHEMAS: dict[str, dict[str, Any]] = {
    "preference": {
        "type": "object",
        "properties": {
            "preference": {"enum": ["A", "B", "TIE"]},
            **_COMMON,
            "tie_reason": {"type": ["string", "null"]},
        },
        "required": ["preference", "confidence", "justification", "identity_leakage_detected"],
    },
    "triangle": {
        "type": "object",
        "properties": {"odd": {"enum": [1, 2, 3]}, **_COMMON},
        "required": ["odd", "confidence", "justification", "identity_leakage_detected"],
    },
    "pair": {
        "type": "object",
        "properties": {
            "nicknames": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 2,
                "maxItems": 2,
            },
            "output_1": {"type": "string", "minLength": 1},
            **_COMMON,
        },
        "required": [
            "nicknames",
            "output_1",
            "confidence",
            "justification",
            "identity_leakage_detected",
        ],
    },
}


def response_format(protocol: str) -> dict[str, object]:
    return {
        "type": "json_schema",
        "json_schema": {"name": f"{protocol}_verdict", "schema": VERDICT_SCHEMAS[protocol]},
    }


# --------------------------------------------------------------------------- verdicts

_FENCE = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def extract_json(text: str) -> object:
    """The JSON object in a model's answer: the whole text, a fenced block, or the outermost
    ``{...}``; raises ValueError when there is none."""
    candidates = [text.strip()]
    candidates += [m.group(1) for m in _FENCE.finditer(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            return orjson.loads(candidate)
        except orjson.JSONDecodeError:
            continue
    raise ValueError("no JSON object in the answer")


@cache
def _validator(protocol: str) -> jsonschema.Draft202012Validator:
    import jsonschema  # deferred: start-up

    return jsonschema.Draft202012Validator(VERDICT_SCHEMAS[protocol])


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


#: Per property of :data:`VERDICT_SCHEMAS`: a test true only of values the schema accepts.
_QUICK: dict[str, Callable[[object], bool]] = {
    "preference": lambda v: v in ("A", "B", "TIE") and isinstance(v, str),
    "odd": lambda v: isinstance(v, int) and not isinstance(v, bool) and v in (1, 2, 3),
    "nicknames": lambda v: _strings(v) and len(v) == 2 and all(v),  # type: ignore[arg-type]
    "output_1": lambda v: isinstance(v, str) and bool(v),
    "confidence": lambda v: _number(v) and 0 <= v <= 1,  # type: ignore[operator]
    "justification": lambda v: isinstance(v, str),
    "key_differentiators": _strings,
    "identity_leakage_detected": lambda v: isinstance(v, bool),
    "identity_leakage_details": lambda v: isinstance(v, str),
    "tie_reason": lambda v: v is None or isinstance(v, str),
}


def _quick_valid(protocol: str, value: object) -> bool:
    """True when ``value`` certainly satisfies the protocol's verdict schema (the common case,
    checked in microseconds); False sends it to jsonschema, which decides and explains."""
    if not isinstance(value, dict):
        return False
    schema = VERDICT_SCHEMAS[protocol]
    properties = schema["properties"]
    if any(name not in value for name in schema["required"]):
        return False
    return all(_QUICK[name](item) for name, item in value.items() if name in properties)


def validate_verdict(protocol: str, text: str) -> tuple[dict[str, Any] | None, str]:
    """The verdict in ``text`` and "", or None and why it is not one (jsonschema decides every
    verdict the quick check is not sure of)."""
    try:
        value = extract_json(text)
    except ValueError as error:
        return None, str(error)
    if _quick_valid(protocol, value):
        assert isinstance(value, dict)
        return value, ""
    validator = _validator(protocol)
    from jsonschema.exceptions import best_match

    problem = best_match(validator.iter_errors(value))
    if problem is not None:
        where = "/" + "/".join(str(p) for p in problem.absolute_path)
        return None, f"invalid verdict at {where}: {problem.message}"
    assert isinstance(value, dict)
    return value, ""


def parse_price(text: str | None) -> tuple[float, float] | None:
    """``--price IN,OUT`` (dollars per million tokens) as two numbers, or None."""
    if text is None:
        return None
    try:
        parts = [float(p) for p in text.split(",")]
    except ValueError:
        parts = []
    if len(parts) != 2 or not all(math.isfinite(p) and p >= 0 for p in parts):
        raise BadInput(
            f"--price: expected IN,OUT dollars per million tokens (two finite numbers >= 0), "
            f"e.g. 2.5,10; got {text!r}"
        )
    return parts[0], parts[1]


# --------------------------------------------------------------------------- options


@dataclass(frozen=True, slots=True)
class LlmOptions:
    """What ``bt-judge --judge llm:MODEL`` was given (the key's variable name, never a key)."""

    model: str
    base_url: str = DEFAULT_URL
    key_env: str | None = None
    temperature: float = 0.0
    concurrency: int = 8
    rpm: float | None = None
    timeout: float = 120.0
    max_retries: int = DEFAULT_POLICY.max_retries
    price: tuple[float, float] | None = None
    template: prompts.JudgeTemplate | None = None
    swap: bool = True
    min_confidence: float = 0.7
    inconsistent: str = "tie"
    context_tokens: int = 128_000

    def settings(self, protocol: str) -> dict[str, object]:
        """What makes this judge's verdicts, recorded on each of its picks (``judge_settings``)
        so a resume with other settings is refused: the model, the URL (scheme, host, port and
        path; no user info or query, where keys may hide: a key in the query may rotate), the
        temperature, the SHA-256 of the prompt templates the protocol uses,
        ``--min-confidence``, and for preference the swap and ``--inconsistent``. Not the key
        (nor its variable), the concurrency, the rate, timeouts, retries or price: they change
        no verdict."""
        parts = urlsplit(self.base_url)
        settings: dict[str, object] = {
            "model": self.model,
            "url": self.endpoint().origin + parts.path.rstrip("/"),
            "temperature": float(self.temperature),
            "template_sha256": _templates_sha256(self.template, protocol),
            "min_confidence": float(self.min_confidence),
        }
        if protocol == "preference":
            settings["swap"] = self.swap
            settings["inconsistent"] = self.inconsistent
        return settings

    def endpoint(self) -> Endpoint:
        """The judge's endpoint; with no key variable set, a 401/403 names the first default."""
        return Endpoint(
            base_url=self.base_url,
            model=self.model,
            key_env=self.key_env,
            temperature=self.temperature,
            unset_key_env=DEFAULT_KEY_ENVS[0] if self.key_env is None else None,
        )


#: The bundled templates each protocol's prompts are made from (judge_prompts.bundled).
_TEMPLATES = {
    "preference": ("preference",),
    "triangle": ("triangle",),
    "pair": ("pair_system", "pair_trial"),
}


def _templates_sha256(template: prompts.JudgeTemplate | None, protocol: str) -> str:
    """SHA-256 of the template texts this judge's prompts are made from, in order."""
    if template is not None and protocol == "preference":
        texts = [template.text]
    else:
        texts = [prompts.bundled(name) for name in _TEMPLATES[protocol]]
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def check_key(options: LlmOptions) -> None:
    """Refuse (exit 2) a judge whose key variable is named but unset, or a remote judge with
    no key variable set at all; nothing needs the run, so ``blindtest run`` asks this before
    it designs or generates anything. As in bt-generate, only a local server is asked
    without a key."""
    endpoint = options.endpoint()
    check_key_names({"judge": endpoint})  # a misspelt variable named, with what is set
    endpoint.check_key("judge")
    if options.key_env is None and not is_loopback(options.base_url):
        raise BadInput(
            f"the LLM judge ({options.model} at {endpoint.origin}) needs a key: export "
            f"{' or '.join(DEFAULT_KEY_ENVS)} with it, or name its variable with "
            "--judge-key-env"
        )


def check_judge_key(kind: str, url: str | None, key_env: str | None) -> None:
    """``blindtest run --judge llm:MODEL``: the judge's key (:func:`check_key`) from its
    options alone, before the design is written or a side is asked (the judge comes last: a
    missing key found there would leave the answers paid for and the chain stopped)."""
    model = kind.removeprefix("llm:").strip()
    if not model:
        raise BadInput("--judge llm:MODEL: name the judge model, e.g. --judge llm:gpt-4o")
    base_url = url or DEFAULT_URL
    check_key(LlmOptions(model, base_url, resolve_key_env(key_env, os.environ)))


def check_run(options: LlmOptions, run: JudgeRun, *, key: bool = True) -> None:
    """Everything that can be refused before the first call (exit 2, nothing written);
    ``key``: whether the key is needed (a batch file export or import calls nothing;
    :func:`check_key`)."""
    if key:
        check_key(options)
    protocol = run.view.protocol
    if options.template is not None and protocol != "preference":
        raise BadInput(f"--judge-template is for preference runs; this run is {protocol}")
    check_fields(run, options)
    if protocol == "pair":
        fits, total = _pair_fit(run.view.trials, options.context_tokens)
        if fits < total:
            raise BadInput(
                f"--judge-context-tokens {options.context_tokens}: the pair transcript of "
                f"{total} trials would not fit; only {fits} fit: raise the limit (the judge "
                "model's context window) or design fewer trials"
            )


#: A prompt record's judge field -> the spec 003 placeholder it fills.
FIELD_PLACEHOLDERS = {
    "criteria": "EVALUATION_CRITERIA",
    "source": "SOURCE_MATERIAL",
    "constraints": "CONSTRAINTS",
}


def prompt_fields(run: JudgeRun) -> dict[int, dict[str, str]]:
    """Trial number -> the criteria, source and constraints its prompt record carries (the
    prompt file's fields, kept in the design). Only the arrangement's ``prompt_id`` is read:
    nothing here depends on which side is which."""
    by_id = {
        str(p["id"]): {name: str(p[name]) for name in FIELD_PLACEHOLDERS if name in p}
        for p in run.design["prompts"]
    }
    return {
        int(entry["trial"]): by_id.get(str(entry["prompt_id"]), {})
        for entry in run.design["arrangement"]
    }


def check_fields(run: JudgeRun, options: LlmOptions) -> None:
    """Preference: a field the prompt file gives for some prompts is required of every
    judged prompt (a prompt without it would be judged by a different prompt: exit 2 naming
    its id), and the template must show it (a ``--judge-template`` without the placeholder
    would hide it from the judge). A field no prompt carries falls back to the defaults."""
    if run.view.protocol != "preference":
        return
    text = options.template.text if options.template is not None else prompts.bundled("preference")
    used = {m.group(1) for m in prompts.PLACEHOLDER.finditer(text)}
    where = options.template.source if options.template is not None else "the bundled prompt"
    fields = prompt_fields(run)
    ids = {int(e["trial"]): str(e["prompt_id"]) for e in run.design["arrangement"]}
    for name, placeholder in FIELD_PLACEHOLDERS.items():
        carried = [n for n in sorted(fields) if name in fields[n]]
        if not carried:
            continue
        if placeholder not in used:
            raise BadInput(
                f"{where}: the prompts carry {name!r} but the template has no "
                f"[{placeholder}]; add it, or the judge never sees it"
            )
        lacking = sorted({ids[n] for n in fields if name not in fields[n]})
        if lacking:
            shown = ", ".join(lacking[:5]) + (", ..." if len(lacking) > 5 else "")
            raise BadInput(
                f"prompt {shown}: no {name!r}, which the prompts of {len(carried)} "
                f'trials carry; give every prompt a {name!r} in the prompt file (e.g. "None.") '
                "and design the run again"
            )


_ANSWER_TOKENS = 200  # what a pair verdict adds to the transcript, generously


def _pair_fit(trials: Sequence[Trial], limit: int) -> tuple[int, int]:
    used = prompts.estimate_tokens(prompts.bundled("pair_system"))
    for count, trial in enumerate(trials):
        turn = prompts.pair_turn(trial.number, input_context(trial), trial.options)
        used += prompts.estimate_tokens(turn["content"]) + _ANSWER_TOKENS
        if used > limit:
            return count, len(trials)
    return len(trials), len(trials)


def _mapping(swapped: bool) -> dict[str, str]:
    return {"A": "right", "B": "left"} if swapped else {"A": "left", "B": "right"}


def input_context(trial: Trial) -> str:
    """The trial's ``[INPUT_CONTEXT]``: its prompt, or its whole conversation, every turn
    role-labelled (:func:`blindtest.judging.llm.prompts.input_context`); the same for every pass."""
    return prompts.input_context(trial.prompt, trial.history)


def comparison_messages(
    run: JudgeRun,
    options: LlmOptions,
    trial: Trial,
    swapped: bool = False,
    fields: Mapping[str, str] | None = None,
) -> list[ChatMessage]:
    """The messages of one (preference: one pass of one) comparison; pair: its first turn.
    ``fields``: the trial's prompt fields (:func:`prompt_fields`; looked up when None)."""
    protocol = run.view.protocol
    if protocol == "preference":
        first, second = trial.options if not swapped else trial.options[::-1]
        given = prompt_fields(run).get(trial.number, {}) if fields is None else fields
        return prompts.preference_messages(
            options.template,
            question=run.view.question,
            prompt=input_context(trial),
            output_a=first,
            output_b=second,
            criteria=given.get("criteria"),
            source=given.get("source"),
            constraints=given.get("constraints"),
        )
    if protocol == "triangle":
        return prompts.triangle_messages(input_context(trial), trial.options)
    turn = prompts.pair_turn(trial.number, input_context(trial), trial.options)
    return prompts.pair_messages([], turn)


def show_prompt(run: JudgeRun, options: LlmOptions, number: int) -> str:
    """The messages the judge gets for trial ``number`` (pass 1), as text; nothing is called."""
    if not 1 <= number <= run.view.total:
        raise BadInput(f"--show-prompt {number}: this run has trials 1..{run.view.total}")
    check_fields(run, options)
    messages = comparison_messages(run, options, run.view.trials[number - 1])
    return "\n\n".join(f"--- {m['role']} ---\n{m['content']}" for m in messages)


# --------------------------------------------------------------------------- asking


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


class LlmJudge:
    """A model judging through the driver; see the module docstring."""

    #: Times a malformed verdict is asked again (a batch import asks nothing: 0).
    verdict_retries = VERDICT_RETRIES

    def __init__(
        self,
        setup: JudgeSetup,
        options: LlmOptions,
        kind: JudgeKind,
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.run = setup.run
        self.judge_id = setup.judge_id
        self.options = options
        self._kind = kind
        self.protocol = setup.run.view.protocol
        self.failed = 0
        self.ledger = _Ledger()
        self._sleep = sleep
        self._plain = False  # the endpoint refused response_format: plain text from now on
        self._refused_format: str | None = None  # what the server said when it refused it
        # The first failure that would repeat for every comparison (or Ctrl-C): once set, no
        # request leaves, and the sitting ends with it after the answers already in are
        # recorded.
        self._halt: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: ChatClient | None = None
        self._futures: dict[int, concurrent.futures.Future[Answer]] = {}
        self._nicknames = judge_nicknames(setup.earlier.picks, setup.judge_id)
        self._fields = prompt_fields(setup.run) if self.protocol == "preference" else {}
        # Trials whose pass 1 is stored without its pass 2 (killed between the two appends):
        # only pass 2 is written for them.
        mine = [p for p in setup.earlier.picks if p.judge == setup.judge_id]
        seconds = {p.trial for p in setup.earlier.later_passes if p.judge == setup.judge_id}
        self._half_done = {p.trial for p in mine if p.pass_number == 1} - seconds
        # Passes paid for in an earlier sitting that no finished comparison holds, by trial and
        # pass: used as they are, never asked again.
        self._kept = self._kept_passes(setup) if self.protocol == "preference" else {}
        # Passes answered in this sitting whose comparison has not finished, by trial: what a
        # stop keeps in a failure row.
        self._got: dict[int, dict[int, _Asked]] = {}
        # A pair judge resumed: its earlier answers go back into the conversation.
        self._history: list[tuple[ChatMessage, str]] = [
            (prompts.pair_turn(p.trial, *_shown(setup.run, p.trial)), str(p.extra["raw_response"]))
            for p in sorted(setup.earlier.picks, key=lambda p: p.trial)
            if self.protocol == "pair" and p.judge == setup.judge_id and "raw_response" in p.extra
        ]
        self._pair_lock: asyncio.Lock | None = None
        self._active: asyncio.Semaphore | None = None
        self._all_started = False
        self._origin = options.endpoint().origin

    @property
    def kind(self) -> JudgeKind:
        return self._kind

    def _kept_passes(self, setup: JudgeSetup) -> dict[int, dict[int, _Asked]]:
        """Pass 1 of a trial killed between its two appends (its pick record), and the
        answered pass a failure row of this judge kept, made with these very settings."""
        kept: dict[int, dict[int, _Asked]] = {}
        for pick in setup.earlier.picks:
            if pick.judge == self.judge_id and pick.trial in self._half_done:
                asked = _stored_pass(self.protocol, pick.extra)
                if asked is not None:
                    kept.setdefault(pick.trial, {})[1] = asked
        passes = 2 if self.options.swap else 1
        own = settings_sha256(self.options.settings(self.protocol))
        for row in setup.earlier.failures:
            stored = row.get(ANSWERED_PASS)
            if (
                row.get("judge") != self.judge_id
                or not isinstance(stored, Mapping)
                or row.get(SETTINGS_HASH_FIELD) != own
                or row.get("design_sha256") != self.run.design_sha256
                or stored.get("pass") not in range(1, passes + 1)
            ):
                continue
            asked = _stored_pass(self.protocol, stored)
            if asked is not None:
                kept.setdefault(int(row["trial"]), {}).setdefault(int(stored["pass"]), asked)
        return kept

    # the sitting: an event loop on a thread of its own --------------------------------

    @contextmanager
    def sitting(self, progress: Callable[[], JudgingResult]) -> Iterator[None]:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="llm-judge", daemon=True)
        thread.start()
        self._loop = loop
        policy = RetryPolicy(max_retries=self.options.max_retries)
        self._client = ChatClient(
            {"judge": self.options.endpoint()},
            concurrency=self.options.concurrency,
            rpm=self.options.rpm,
            timeout=self.options.timeout,
            policy=policy,
        )
        self._call(self._open())
        try:
            with self._ctrl_c():
                yield
        finally:
            self._call(self._shutdown())
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()

    def _call(self, coro: Any) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    async def _open(self) -> None:
        assert self._client is not None
        self._client.open()
        self._pair_lock = asyncio.Lock()
        self._active = asyncio.Semaphore(2 * self.options.concurrency)

    async def _shutdown(self) -> None:
        await self._cancel_open()
        if self._client is not None:
            await self._client.aclose()

    # the driver's questions ----------------------------------------------------------

    def judge(self, turn: Turn) -> Answer:
        assert self._loop is not None
        if self._halt is not None and turn.trial.number not in self._futures:
            return Halt(self._halt)  # never started: nothing is asked any more
        if not self._all_started or turn.trial.number not in self._futures:
            # the first turn starts every comparison (pair: one at a time), in one hand-over
            # to the loop; later turns only collect (walking the trials ahead on every turn
            # was quadratic, and one cross-thread call per comparison delayed the first)
            ahead = (turn.trial, *turn.ahead) if self.protocol != "pair" else (turn.trial,)
            start = []
            for trial in ahead:
                if trial.number not in self._futures:
                    self._futures[trial.number] = concurrent.futures.Future()
                    start.append((trial, self._futures[trial.number]))
            self._loop.call_soon_threadsafe(self._start, start)
            self._all_started = self.protocol != "pair"
        future = self._futures.pop(turn.trial.number)
        # Waited for through result(): concurrent.futures.wait() misses a cancel().
        with contextlib.suppress(Exception):  # what it raised is read in _answer
            future.result()
        return self._answer(turn.trial.number, future)

    def _answer(self, number: int, future: concurrent.futures.Future[Answer]) -> Answer:
        """A settled comparison as the driver takes it: its records or failure row, or, when
        the judge was stopped, ``Halt`` with the passes it already got kept in a row."""
        try:
            answer = future.result()
        except (EndpointFailed, _Halted, concurrent.futures.CancelledError):
            assert self._halt is not None
            got = self._got.pop(number, {})
            return Halt(self._halt, self._stopped_row(number, got) if got else None)
        if isinstance(answer, Failed):
            self.failed += 1
        return answer

    @contextmanager
    def _ctrl_c(self) -> Iterator[None]:
        """While the judge sits (in the main thread): the first Ctrl-C stops it without
        raising where it lands (it could land while the driver writes a pick): nothing more
        is sent, every comparison still open is cancelled (an answer not yet in is given up;
        passes already in are kept), the driver records what was answered and then ends the
        sitting with ``KeyboardInterrupt``. A second Ctrl-C raises at once."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        interrupted = False

        def on_sigint(signum: int, frame: object) -> None:
            nonlocal interrupted
            if interrupted:
                raise KeyboardInterrupt
            interrupted = True
            self._halt = self._halt or KeyboardInterrupt()
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self._cancel_all)

        previous = signal.signal(signal.SIGINT, on_sigint)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)

    @staticmethod
    def _cancel_all() -> None:
        """On the loop: cancel every task (each comparison settles its future as cancelled)."""
        for task in asyncio.all_tasks():
            task.cancel()

    async def _cancel_open(self) -> None:
        current = asyncio.current_task()
        tasks = [t for t in asyncio.all_tasks() if t is not current]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _stopped_row(self, number: int, got: Mapping[int, _Asked]) -> dict[str, Any]:
        """The failure row of a comparison stopped with one pass answered and one not."""
        answered = min(got)
        missing = next(n for n in (1, 2) if n not in got)
        why = (
            "interrupted (Ctrl-C)"
            if isinstance(self._halt, KeyboardInterrupt)
            else str(self._halt).split("; ")[0]
        )
        return {
            "comparison_id": f"{(self.run.design_sha256 or '')[:12]}-{number}",
            "judge_model": self.options.model,
            "error": f"pass {missing} not answered ({why}); pass {answered}'s answer is kept "
            f"here and a rerun asks only pass {missing}",
            "attempts": 0,
            ANSWERED_PASS: _answered_pass(answered, got[answered]),
            "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }

    def _start(
        self, comparisons: Sequence[tuple[Trial, concurrent.futures.Future[Answer]]]
    ) -> None:
        """On the loop: a task per comparison, in trial order, each settling its future."""
        assert self._loop is not None
        for trial, future in comparisons:
            task = self._loop.create_task(self._comparison(trial))
            task.add_done_callback(partial(_settle, future))

    def end(self, result: JudgingResult) -> None:
        pass

    def closing(self, result: JudgingResult, out: Path, analyze_command: str) -> str:
        led = self.ledger
        failed = f", {self.failed} failed (rerun the same command to ask them again)"
        tokens = f"; {led.requests} requests ({led.retries} retries), " + (
            f"{led.prompt_tokens + led.completion_tokens} tokens"
        )
        cost = self._cost(led.prompt_tokens, led.completion_tokens)
        money = f", ${cost:.4f}" if cost is not None else ""
        if self._refused_format is not None:
            money += (
                f"; the endpoint refused structured output ({self._refused_format}), so "
                "verdicts were asked as plain text"
            )
        earlier = result.judged - result.judged_now
        before = f" ({result.judged} of {self.run.view.total} in all)" if earlier else ""
        return (
            f"The LLM judge {self.options.model} judged {result.judged_now} of "
            f"{self.run.view.total} trials{before}{failed if self.failed else ''} into {out}"
            f"{tokens}{money}. Run {analyze_command} to see the result."
        )

    def _cost(self, tokens_in: int, tokens_out: int) -> float | None:
        price = self.options.price
        return None if price is None else (tokens_in * price[0] + tokens_out * price[1]) / 1e6

    # one comparison ----------------------------------------------------------------

    async def _comparison(self, trial: Trial) -> Answer:
        if self.protocol != "pair":
            # At most twice --concurrency comparisons prepare and ask at once (enough to keep
            # the client's slots full while some parse a verdict or back off): the first
            # request leaves as soon as its prompt is built, not after every comparison's.
            active = self._active
            assert active is not None
            async with active:
                if self.protocol == "preference":
                    return await self._preference(trial)
                return await self._triangle(trial)
        lock = self._pair_lock
        assert lock is not None
        async with lock:
            return await self._pair(trial)

    async def _triangle(self, trial: Trial) -> Answer:
        asked = await self._ask(comparison_messages(self.run, self.options, trial), None)
        if asked.verdict is None:
            return self._failure(trial, asked)
        verdict = asked.verdict
        return (self._flag(self._pick(trial, int(verdict["odd"]), verdict, asked)),)

    async def _pair(self, trial: Trial) -> Answer:
        turn = prompts.pair_turn(trial.number, input_context(trial), trial.options)
        messages = prompts.pair_messages(self._history, turn)
        asked = await self._ask(messages, self._check_nicknames)
        if asked.verdict is None:
            return self._failure(trial, asked)
        verdict = asked.verdict
        names = (str(verdict["nicknames"][0]), str(verdict["nicknames"][1]))
        self._nicknames = self._nicknames or names
        self._history.append((turn, asked.raw))
        pick = self._pick(trial, str(verdict["output_1"]), verdict, asked)
        return (replace(self._flag(pick), nicknames=self._nicknames),)

    def _flag(self, pick: Pick) -> Pick:
        """Triangle and pair: a low-confidence or leaking verdict is flagged for human review;
        it still counts (these protocols have no tie to count it as, and a trial left out
        would leave a fixed design unfinished); the report lists them."""
        rules = []
        if pick.confidence is not None and pick.confidence < self.options.min_confidence:
            rules.append("low_confidence")
        if pick.extra.get("identity_leakage"):
            rules.append("identity_leakage")
        if not rules:
            return pick
        return replace(pick, extra={**pick.extra, "flagged": rules})

    def _check_nicknames(self, verdict: dict[str, Any]) -> str:
        names = tuple(verdict["nicknames"])
        if len(set(names)) != 2:
            return "the two nicknames must differ"
        if verdict["output_1"] not in names:
            return f"output_1 {verdict['output_1']!r} is not one of the nicknames {list(names)}"
        if self._nicknames is not None and set(names) != set(self._nicknames):
            return f"the nicknames changed from {list(self._nicknames)}"
        return ""

    async def _preference(self, trial: Trial) -> Answer:
        passes = (False, True) if self.options.swap else (False,)
        asked = await self._passes(trial, passes)
        for one in asked:
            if one.verdict is None:
                return self._failure(trial, one, passes=asked)
        picks = [
            _side(str(one.verdict["preference"]), swapped)
            for one, swapped in zip(asked, passes, strict=True)
            if one.verdict is not None
        ]
        consistent = len(set(picks)) == 1 if self.options.swap else None
        records: list[Pick] = []
        half_done = trial.number in self._half_done
        for number, (one, swapped, own) in enumerate(zip(asked, passes, picks, strict=True), 1):
            assert one.verdict is not None
            if half_done and number == 1:
                continue
            verdict = one.verdict
            rules: list[str] = []
            pick = own
            if number == 1:
                pick, rules = self._rule(picks, consistent, asked)
            record = self._pick(trial, pick, verdict, one, swapped=swapped)
            extra = dict(record.extra)
            extra["pass_pick"] = own
            if consistent is not None:
                extra["position_consistent"] = consistent
            if rules:
                extra["flagged"] = rules
            excluded = self._excluded(rules)
            if number == 1 and excluded:
                extra["excluded"] = excluded
            records.append(
                Pick(
                    trial=record.trial,
                    judge=record.judge,
                    pick=pick,
                    reason=record.reason,
                    confidence=record.confidence,
                    at=record.at,
                    judge_kind="llm",
                    pass_number=number if self.options.swap else None,
                    extra=extra,
                )
            )
        return tuple(records)

    async def _passes(self, trial: Trial, passes: Sequence[bool]) -> list[_Asked]:
        """Each pass of a preference comparison (``passes``: swapped or not), a pass paid for
        in an earlier sitting taken as it is."""
        kept = self._kept.get(trial.number, {})
        fields = self._fields.get(trial.number, {})

        async def ask(number: int, swapped: bool) -> _Asked:
            if number in kept:
                return kept[number]  # paid for in an earlier sitting
            messages = comparison_messages(self.run, self.options, trial, swapped, fields)
            one = await self._ask(messages, None)
            if one.verdict is not None and self.options.swap:
                self._got.setdefault(trial.number, {})[number] = one
            return one

        # Both passes run to their end even when one is stopped: a request in flight may still
        # be answered, and that answer is kept (``_got``) for the failure row of a stop.
        ended = await asyncio.gather(
            *(ask(number, swapped) for number, swapped in enumerate(passes, 1)),
            return_exceptions=True,
        )
        for outcome in ended:
            if isinstance(outcome, BaseException):
                raise outcome
        self._got.pop(trial.number, None)
        self._kept.pop(trial.number, None)
        return [outcome for outcome in ended if isinstance(outcome, _Asked)]

    def _excluded(self, rules: Sequence[str]) -> str | None:
        """Why a comparison is left out of the aggregate: leakage (spec 003), or an
        inconsistent swap under ``--inconsistent exclude``."""
        if "identity_leakage" in rules:
            return "identity_leakage"
        if "position_inconsistent" in rules and self.options.inconsistent == "exclude":
            return "position_inconsistent"
        return None

    def _rule(
        self, picks: Sequence[str], consistent: bool | None, asked: Sequence[_Asked]
    ) -> tuple[str, list[str]]:
        """The comparison's verdict from its passes: an inconsistent pair, or a confidence
        below ``--min-confidence`` (the lower of the passes), counts as a tie and is flagged."""
        rules = []
        pick = picks[0]
        if consistent is False:
            rules.append("position_inconsistent")
            pick = "tie"
        lowest = min(float(a.verdict["confidence"]) for a in asked if a.verdict is not None)
        if lowest < self.options.min_confidence:
            rules.append("low_confidence")
            pick = "tie"
        if any(a.verdict is not None and a.verdict["identity_leakage_detected"] for a in asked):
            rules.append("identity_leakage")
        return pick, rules

    def _pick(
        self,
        trial: Trial,
        pick: int | str,
        verdict: dict[str, Any],
        asked: _Asked,
        *,
        swapped: bool = False,
    ) -> Pick:
        cost = self._cost(asked.prompt_tokens, asked.completion_tokens)
        extra: dict[str, Any] = {
            "comparison_id": f"{(self.run.design_sha256 or '')[:12]}-{trial.number}",
            "judge_model": self.options.model,
            "judge_origin": self._origin,
            "verdict": verdict.get("preference", verdict.get("odd", verdict.get("output_1"))),
            "key_differentiators": list(verdict.get("key_differentiators") or []),
            "identity_leakage": bool(verdict["identity_leakage_detected"]),
            "identity_leakage_details": verdict.get("identity_leakage_details"),
            "raw_response": asked.raw,
            "attempts": asked.attempts,
            "tokens": {"prompt": asked.prompt_tokens, "completion": asked.completion_tokens},
        }
        if self.protocol == "preference":
            extra["position_mapping"] = _mapping(swapped)
            extra["tie_reason"] = verdict.get("tie_reason")
        if cost is not None:
            extra["cost"] = round(cost, 8)
        return Pick(
            trial=trial.number,
            judge=self.judge_id,
            pick=pick,
            reason=str(verdict.get("justification") or "") or None,
            confidence=float(verdict["confidence"]),
            at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            judge_kind="llm",
            extra={k: v for k, v in extra.items() if v is not None},
        )

    def _failure(
        self, trial: Trial, asked: _Asked, passes: Sequence[_Asked] | None = None
    ) -> Failed:
        """The failure row of a comparison with no verdict: ``attempts`` counts the requests of
        the passes that got none; a pass of ``passes`` answered in this sitting is kept in the
        row (:data:`ANSWERED_PASS`) for the rerun."""
        self.ledger.failures += 1
        passes = passes if passes is not None else (asked,)
        row: dict[str, Any] = {
            "comparison_id": f"{(self.run.design_sha256 or '')[:12]}-{trial.number}",
            "judge_model": self.options.model,
            "error": asked.error,
            "raw_response": asked.raw,
            "attempts": sum(a.attempts for a in passes if a.verdict is None),
            "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        fresh = [
            (number, one)
            for number, one in enumerate(passes, 1)
            if one.verdict is not None and not one.reused
        ]
        if fresh:
            row[ANSWERED_PASS] = _answered_pass(*fresh[0])
        return Failed(row)

    async def _ask(
        self,
        messages: Sequence[ChatMessage],
        check: Callable[[dict[str, Any]], str] | None,
    ) -> _Asked:
        """One verdict: asked again (with backoff) up to ``VERDICT_RETRIES`` times when the
        answer is malformed or invalid; transport retries happen inside the client."""
        asked = _Asked(None, "")
        for attempt in range(self.verdict_retries + 1):
            if attempt:
                await self._sleep(min(8.0, 0.5 * 2 ** (attempt - 1)))
            completion = await self._complete(messages)
            asked.attempts += completion.attempts
            self.ledger.requests += completion.attempts
            self.ledger.retries += completion.attempts - 1 + (attempt > 0)
            if completion.usage is not None:
                asked.prompt_tokens += completion.usage.prompt_tokens
                asked.completion_tokens += completion.usage.completion_tokens
                self.ledger.prompt_tokens += completion.usage.prompt_tokens
                self.ledger.completion_tokens += completion.usage.completion_tokens
            if not completion.ok:
                asked.error = completion.error or completion.kind
                return asked  # the client already retried the transport
            asked.raw = completion.text
            verdict, problem = validate_verdict(self.protocol, completion.text)
            if verdict is not None and check is not None:
                problem = check(verdict)
                verdict = None if problem else verdict
            if verdict is not None:
                asked.verdict = verdict
                return asked
            asked.error = f"no valid verdict after {attempt + 1} answers: {problem}"
        return asked

    async def _complete(self, messages: Sequence[ChatMessage]) -> Completion:
        """One request (with the client's retries); the first failure the client raises (it
        would repeat for every comparison) halts the judge: no later request is sent."""
        if self._halt is not None:
            raise _Halted
        try:
            return await self._request(messages)
        except EndpointFailed as error:
            if self._halt is None:
                self._halt = error
            raise

    async def _request(self, messages: Sequence[ChatMessage]) -> Completion:
        client = self._client
        assert client is not None
        if self._plain:
            return await client.complete("judge", messages)
        try:
            return await client.complete(
                "judge", messages, response_format=response_format(self.protocol)
            )
        except EndpointRejected as error:
            if not _refuses_response_format(error):
                raise
            self.ledger.requests += error.attempts or 1
            if not self._plain:
                # Plain text from now on. Should the server refuse the request without it too,
                # the refusal was about something else, and that 400 halts the judge.
                self._plain = True
                said = (error.server_message or "").rstrip().removesuffix(".")
                self._refused_format = f"HTTP {error.status}" + (f": {said}" if said else "")
        return await client.complete("judge", messages)


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


def llm_kind(options: LlmOptions) -> JudgeKind:
    """The ``--judge llm:MODEL`` kind for these options (checked before anything is written)."""

    def check(run: JudgeRun) -> None:
        pass

    def make(setup: JudgeSetup) -> LlmJudge:
        return LlmJudge(setup, options, kind)

    kind = JudgeKind(
        f"llm:{options.model}",
        "llm",
        make,
        check,
        default_id=options.model,
        settings=options.settings,
    )
    return kind


def judge_kind(name: str) -> JudgeKind:
    """``llm:MODEL`` with every setting at its default (``bt-judge`` builds the kind from its
    ``--judge-*`` options: :func:`blindtest.stages.judge.llm_options`)."""
    model = name.partition(":")[2].strip()
    if not model:
        raise BadInput("--judge llm:MODEL: name the judge model, e.g. --judge llm:gpt-4o")
    return llm_kind(LlmOptions(model=model))


def resolve_key_env(given: str | None, environ: Mapping[str, str]) -> str | None:
    """``--judge-key-env``, else the first of :data:`DEFAULT_KEY_ENVS` that is set, else None
    (a local server that needs no key)."""
    if given is not None:
        return given
    return next((name for name in DEFAULT_KEY_ENVS if environ.get(name)), None)
