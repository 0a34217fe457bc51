"""bt-generate's library: fetch the slots a design still needs (the slot model is
:mod:`blindtest.slots`), record each answer or failure, guard against deterministic
endpoints, and keep the per-session ledger. Never opens a file (records go out through an
``append`` callback, files are read and written by the caller's callbacks) and never opens a
socket (requests go through the ``ChatClient`` it is given).

Resume. ``responses.jsonl`` is append-only; an answered slot is never requested again, and a
failure row leaves its slot pending for the next run.

Normalization. Per response: ``--strip-formatting`` is applied to the text stored in the row
(the original kept in ``raw_text``); laundering adds a second row per slot holding the
rewrite. Per trial: ``--truncate-match`` is applied when the blinded view is built
(:func:`blindtest.slots.build_trials_view`); ``trials.jsonl`` is exactly what the judge sees.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import time
from array import array
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypedDict, cast

import orjson

from blindtest import artifacts, reportfmt
from blindtest.artifact_types import (
    DesignRecord,
    GenerationRecord,
    ResponseRow,
    TrialRecord,
    UsageRecord,
)
from blindtest.artifacts import Columns, JsonObject, schema_tag
from blindtest.batch import BatchResult, custom_id, parse_custom_id, result_completion
from blindtest.client import (
    DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT,
    ChatClient,
    Completion,
    Endpoint,
)
from blindtest.endpoints import is_loopback
from blindtest.errors import (
    BadInput,
    CheckFailed,
    EndpointFailed,
    PromptTooLong,
)
from blindtest.normalize import (
    count_words,
    launder_messages,
    normalize_answer,
    outside_band,
)
from blindtest.protocols import protocol_of
from blindtest.retry import DEFAULT_POLICY, RetryPolicy
from blindtest.sides import SIDES, fill_template, parse_header_env, side_system
from blindtest.slots import (
    LAUNDER,
    Slot,
    SlotState,
    Work,
    build_trials_view,
    check_rows_match_design,
    iter_slots,
    iter_trials_view,
    original_text,
    pending_work,
    plan_slots,
    slot_seed,
)
from blindtest.wire import ChatMessage, ServerError, prompt_too_long, token_field_for

#: The deterministic-side guard. A side that answers deterministically (temperature ignored
#: or 0, or a cache) gives its two triangle draws the same text, and the triangle degenerates
#: into spot-the-twin: the odd response is found by equality, and the run measures that tell,
#: not the models. Short answers at a real temperature collide by chance ("Yes", "Paris."),
#: so the count of identical pairs alone cannot tell the two apart; their length can. The
#: guard keeps, per side, a likelihood ratio (an e-process) over that side's twin pairs:
#:
#: * H0, the side samples: a second independent draw reproduces a given answer of ``n`` words
#:   with probability at most ``q(n)`` (:func:`chance_of_repeat`): 1 up to ``FREE_WORDS``
#:   words (a short answer may well be the only likely one), then ``AGREE_PER_WORD`` per
#:   further word, and never below ``RAREST_REPEAT`` (a prompt with one right wording, a
#:   quotation or a listing, repeats at any temperature, so no single pair counts for more);
#: * H1, the side is deterministic: its pairs come back identical, but for a share
#:   ``DETERMINISTIC_MISS`` (a seeded server's best effort, a cache miss).
#:
#: An identical pair of ``n`` words multiplies the ratio by ``(1 - miss) / q(n)``, a pair that
#: differs by ``miss``. Under H0 each factor has expectation at most 1, so by Ville's
#: inequality a sampling side reaches ``STOP_EVIDENCE`` with probability at most its inverse
#: however often it is checked. Worked figures: one-word answers never count (the factor is
#: 0.9), however many collide; five identical pairs of 50 words or more reach ~10^19.7 (a
#: 10-trial design with one deterministic side is caught); one identical pair never reaches it
#: (at most 0.9 x 10^4), nor do two among a side's five pairs (10^7.9 x 10^-3).
FREE_WORDS = 5
AGREE_PER_WORD = 0.8
RAREST_REPEAT = 1e-4
DETERMINISTIC_MISS = 0.1
STOP_EVIDENCE = 1e6
#: Judged once this many twin pairs are in (or all of them, in a smaller design): a workload
#: whose first prompts have one right wording does not stop the run before the rest speak.
MIN_PAIRS = 10
#: Assumed output length for a cost estimate when the design sets no token limit.
ASSUMED_OUTPUT_TOKENS = 600


@dataclass
class Progress:
    """Counts the CLI renders; updated by `run_generation` as results arrive."""

    total: int
    done: int = 0
    failed: int = 0
    retries: int = 0
    started: float = field(default_factory=time.monotonic)


def system_prompt(design: DesignRecord, side: str | None = None) -> str | None:
    """The system prompt a side gets: its own or the design's shared one, plus the
    length-band instruction (``side`` None: the shared one)."""
    parts = [design.get("system") if side is None else side_system(design, side)]
    band = design["normalization"]["length_band"]
    if band is not None:
        parts.append(band["instruction"])
    text = "\n\n".join(p for p in parts if p)
    return text or None


#: The prompts list last indexed by id, its length, and the index: one dict lookup per request
#: instead of a scan of every prompt (that scan made bt-generate quadratic).
_PROMPT_INDEX: list[tuple[Any, int, dict[str, Any]]] = []


def _prompt_by_id(prompts: Sequence[Any], prompt_id: str) -> Any:
    if isinstance(prompts, Columns):  # a lean design: its own index, no dict per prompt
        if not prompts.has_key("messages"):
            return None  # no conversations: nothing but the text is needed
        return prompts[prompts.position("id", prompt_id, last=True)]
    if (
        not _PROMPT_INDEX
        or _PROMPT_INDEX[0][0] is not prompts
        or _PROMPT_INDEX[0][1] != len(prompts)
    ):
        index: dict[str, Any] = {}
        for prompt in prompts:
            index.setdefault(prompt["id"], prompt)  # the first of a repeated id, as before
        _PROMPT_INDEX[:] = [(prompts, len(prompts), index)]
    return _PROMPT_INDEX[0][2].get(prompt_id)


def prompt_texts(design: DesignRecord) -> Callable[[str], str]:
    """A prompt's text by id (a lean design's prompts are looked up by position; a list of
    dicts is indexed once)."""
    prompts: Any = design["prompts"]
    if isinstance(prompts, Columns):
        return lambda prompt_id: str(
            prompts.value(prompts.position("id", prompt_id, last=True), "text")
        )
    texts = {p["id"]: p["text"] for p in prompts}
    return texts.__getitem__


def messages_for(
    design: DesignRecord, prompt_text: str, side: str | None = None, prompt_id: str = ""
) -> list[ChatMessage]:
    """What ``side`` is sent for a prompt: its system prompt, a conversation's earlier turns
    (when ``prompt_id`` names one), then the prompt (through the side's template, when it has
    one): the side answers the last turn."""
    messages: list[ChatMessage] = []
    system = system_prompt(design, side)
    if system is not None:
        messages.append({"role": "system", "content": system})
    record = _prompt_by_id(design["prompts"], prompt_id) if prompt_id else None
    for turn in (record or {}).get("messages", [])[:-1]:
        messages.append({"role": turn["role"], "content": turn["content"]})
    template = None if side is None else design["models"][side].get("template")
    messages.append({"role": "user", "content": fill_template(template, prompt_text)})
    return messages


def endpoints_for(
    design: DesignRecord, environ: Mapping[str, str] | None = None
) -> dict[str, Endpoint]:
    """Client endpoints for A, B (and the launderer). A local server (127.0.0.1, localhost)
    needs no key: when the named variable is unset, no Authorization header is sent (and a
    401/403 says that variable is not set)."""
    environ = os.environ if environ is None else environ
    specs: dict[str, dict[str, Any]] = {
        side: {**spec, **spec["params"]}
        for side, spec in design["models"].items()
        if design["source"]["kind"] == "endpoints"
    }
    launder = design["normalization"]["launder"]
    if launder is not None:
        specs[LAUNDER] = {**launder, "temperature": None, "max_tokens": None}
    endpoints = {}
    for role, spec in specs.items():
        key_env, unset = spec["key_env"], None
        if not environ.get(key_env) and is_loopback(spec["base_url"]):
            key_env, unset = None, key_env
        endpoints[role] = Endpoint(
            base_url=spec["base_url"],
            model=spec["model"],
            key_env=key_env,
            unset_key_env=unset,
            temperature=spec.get("temperature"),
            top_p=spec.get("top_p"),
            max_tokens=spec.get("max_tokens"),
            max_tokens_field=token_field_for(spec["base_url"]),
            extra=spec.get("extra_params") or None,
        )
    return endpoints


# --------------------------------------------------------------------------- what determined a row

#: The row fields that say what determined an answer (the request, or the imported file).
DETERMINED_BY = ("request_sha256", "source_sha256")


def request_sha256(body: Mapping[str, object]) -> str:
    """SHA-256 of a request body in canonical form (orjson, keys sorted at every level, no
    spaces): the same request gives the same hash whatever order its fields were set in."""
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


class SlotRequests:
    """What each slot asks for now, by the design: the body a live run sends (the per-slot
    seed included, also where the server refuses seeds: the row's ``seed`` says what was
    sent), the same body a batch export writes; and which row fields and values record it."""

    def __init__(self, design: DesignRecord) -> None:
        self.design = design
        self.imported = design["source"]["kind"] == "dirs"
        self._endpoints = endpoints_for(design, environ={})  # the bodies only: no key is read
        self._text = prompt_texts(design)

    def body(self, work: Work) -> dict[str, object]:
        if work.stage == LAUNDER:
            messages: Any = launder_messages(work.source or "")
            return self._endpoints[LAUNDER].request_body(messages)
        slot = work.slot
        seed = slot_seed(self.design["seed"], slot.trial, slot.slot)
        text = self._text(slot.prompt_id)
        messages = messages_for(self.design, text, slot.side, slot.prompt_id)
        return self._endpoints[slot.side].request_body(messages, seed=seed)

    def determined_by(self, work: Work) -> tuple[str, str]:
        """(field, hex SHA-256) a row for ``work`` records: the request's hash, or for a
        --from-dirs answer the hash of the file it was read from (as the design holds it)."""
        if self.imported and work.stage != LAUNDER:
            files = self.design["source"]["files"][work.slot.prompt_id][work.slot.side]
            return "source_sha256", str(files[_variant_for(self.design, work.slot)])
        return "request_sha256", request_sha256(self.body(work))

    def model(self, work: Work) -> str:
        return _role_model(self.design, LAUNDER if work.stage == LAUNDER else work.slot.side)

    def matches(self, row: Mapping[str, Any], work: Work) -> bool:
        """Whether ``row`` answers what ``work`` asks now. A row from before rows recorded
        their request (no hash) is checked by the model it names."""
        if not any(key in row for key in DETERMINED_BY):
            return bool(row.get("model") == self.model(work))
        key, expected = self.determined_by(work)
        return bool(row.get(key) == expected)


# --------------------------------------------------------------------------- records


class _MeasuredRequired(TypedDict):
    finish_reason: str | None
    usage: UsageRecord | None
    latency_ms: float | None
    attempts: int
    seed: int | None


class _Measured(_MeasuredRequired, total=False):
    """How a request went: the ``ResponseRow`` keys ``_row`` takes from the caller."""

    served_model: str | None


def _row(
    design: DesignRecord,
    slot: Slot,
    stage: str,
    model: str,
    kind: str,
    measured: _Measured,
    raw: str | None,
    error: str | None = None,
) -> ResponseRow:
    """One ``responses.jsonl`` row: the slot, what asked and how it went (``measured``), then
    the answer ``raw`` as normalized (the original kept in ``raw_text`` when that changed
    it), or, with ``raw`` None, an explicit failure."""
    row: ResponseRow = {
        "schema": schema_tag("responses"),
        "trial": slot.trial,
        "slot": slot.slot,
        "side": slot.side,
        "prompt_id": slot.prompt_id,
        # Work.stage is "generate" or LAUNDER.
        "stage": cast(Literal["generate", "launder"], stage),
        "model": model,
        "kind": kind,
        "finish_reason": measured["finish_reason"],
        "usage": measured["usage"],
        "latency_ms": measured["latency_ms"],
        "attempts": measured["attempts"],
        "seed": measured["seed"],
        "status": "failed",
        "text": None,
    }
    if "served_model" in measured:
        row["served_model"] = measured["served_model"]
    if raw is None:
        return row | {"error": error or "failed"}
    # Formatting, names and self-identification out of what the judge sees; bt-verify
    # re-derives every row's text with the same function.
    text, stripped = normalize_answer(design["normalization"], raw)
    row |= {"status": "ok", "text": text}
    if text != raw:
        row["raw_text"] = raw
    if stripped:
        row["identity_stripped"] = stripped
    return row


def response_record(
    design: DesignRecord,
    work: Work,
    completion: Completion,
    model: str,
    requests: SlotRequests | None = None,
) -> ResponseRow:
    """The ``responses.jsonl`` row for one finished request (answer or explicit failure);
    with ``requests``, the row records the hash of the request it answers."""
    row = _response_row(design, work, completion, model)
    if requests is not None:
        key, digest = requests.determined_by(work)
        if key == "source_sha256":
            row["source_sha256"] = digest
        else:
            row["request_sha256"] = digest
    return row


def _response_row(
    design: DesignRecord, work: Work, completion: Completion, model: str
) -> ResponseRow:
    usage = completion.usage
    measured: _Measured = {
        "finish_reason": completion.finish_reason,
        "usage": None
        if usage is None
        else {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        },
        "latency_ms": round(completion.latency_ms, 3),
        "attempts": completion.attempts,
        "seed": completion.seed,
        # What the server says answered: a single-model server answers any name it is given.
        "served_model": completion.model,
    }
    if not completion.ok:
        return _row(
            design, work.slot, work.stage, model, completion.kind, measured, None, completion.error
        )
    raw = completion.text if completion.text else (completion.refusal or "")
    row = _row(design, work.slot, work.stage, model, completion.kind, measured, raw)
    if completion.reasoning is not None:  # recorded apart; the judge never sees it
        row["reasoning"] = completion.reasoning
    return row | {"truncated": completion.truncated, "refusal": completion.refusal}


def _same(first: object, second: object) -> bool:
    """Whether two draws came back identical, whitespace aside (by digests of their texts)."""
    return first == second


def _arrangement_values(design: DesignRecord, key: str) -> Iterator[Any]:
    arrangement: Any = design["arrangement"]
    if isinstance(arrangement, Columns):
        return (arrangement.value(i, key) for i in range(len(arrangement)))
    return (entry.get(key) for entry in arrangement)


def trial_positions(design: DesignRecord) -> Callable[[int], int | None]:
    """A trial number's position in the arrangement (None: no such trial); trials numbered
    1..n in order, as bt-design writes them, need no table."""
    count = len(design["arrangement"])
    numbers = _arrangement_values(design, "trial")
    if all(number == position for position, number in enumerate(numbers, start=1)):
        return lambda trial: trial - 1 if type(trial) is int and 0 < trial <= count else None
    table: dict[int, int] = {}
    for position, number in enumerate(_arrangement_values(design, "trial")):
        table.setdefault(number, position)
    return table.get


def chance_of_repeat(words: int) -> float:
    """H0's bound on the chance that a sampling side's second draw repeats an answer of
    ``words`` words exactly (see ``STOP_EVIDENCE``)."""
    if words <= FREE_WORDS:
        return 1.0
    return max(RAREST_REPEAT, AGREE_PER_WORD ** (words - FREE_WORDS))


def pair_evidence(words: int | None) -> float:
    """log10 of the factor one twin pair puts on the deterministic-side ratio: ``words`` is
    the identical answer's length, None a pair that differs."""
    if words is None:
        return math.log10(DETERMINISTIC_MISS)
    return math.log10((1 - DETERMINISTIC_MISS) / chance_of_repeat(words))


@dataclass
class SideCollisions:
    """One side's twin pairs: how many are fetched, how many came back identical, the longest
    identical answer (words) and log10 of the deterministic-side ratio (``pair_evidence``)."""

    pairs: int = 0
    identical: int = 0
    longest: int = 0
    evidence: float = 0.0

    def take(self, words: int | None) -> None:
        self.pairs += 1
        if words is not None:
            self.identical += 1
            self.longest = max(self.longest, words)
        self.evidence += pair_evidence(words)


@dataclass
class DrawCollisions:
    """Triangle trials whose two same-model draws are both fetched (``pairs``) and of those,
    the ones that came back identical, whitespace aside (``identical``); per doubled side,
    the same and the evidence that it answers deterministically (``sides``).

    Fed each slot as it is first answered (:meth:`take`): the first twin of a trial leaves
    a hash of its text until the second arrives, so the guard costs O(1) per response and a
    few bytes per trial (``odd``: each trial's odd position, 0 outside a triangle).
    """

    odd: bytearray
    trials: int
    position: Callable[[int], int | None]
    pairs: int = 0
    identical: int = 0
    first: dict[int, tuple[int, int]] = field(default_factory=dict)
    sides: dict[str, SideCollisions] = field(
        default_factory=lambda: {side: SideCollisions() for side in SIDES}
    )

    @classmethod
    def empty(cls, design: DesignRecord) -> DrawCollisions:
        count = len(design["arrangement"])
        odd = bytearray(count)
        if design["protocol"] == "triangle":
            odd = bytearray(int(p) for p in _arrangement_values(design, "odd_position"))
        return cls(odd, count, trial_positions(design))

    @classmethod
    def for_design(cls, design: DesignRecord, state: SlotState) -> DrawCollisions:
        collisions = cls.empty(design)
        for key in state.generated:
            collisions.add(state, key)
        return collisions

    def add(self, state: SlotState, key: tuple[int, int]) -> None:
        """:meth:`take` the row ``state`` holds for slot ``key``, if it is an answer."""
        row = state.generated.get(key)
        if row is not None and row["status"] == "ok":
            self.take(key[0], key[1], row)

    def take(self, trial: int, slot: int, row: Mapping[str, Any]) -> None:
        """Count a trial once both of its twin draws are answered (call once per slot, when
        it is first answered)."""
        position = self.position(trial)
        if position is None or not self.odd[position] or slot == self.odd[position]:
            return
        text = " ".join(original_text(row).split())
        digest = hash(text)
        other = self.first.get(position)
        if other is None:
            self.first[position] = (slot, digest)
        elif other[0] != slot:
            del self.first[position]
            self.pairs += 1
            same = _same(other[1], digest)
            self.identical += same
            side = self.sides.get(str(row.get("side")))
            if side is not None:
                side.take(count_words(text) if same else None)

    def deterministic_sides(self) -> list[str]:
        """The sides whose twin pairs show them deterministic (``STOP_EVIDENCE``), once
        enough pairs are in to judge."""
        if self.pairs < min(MIN_PAIRS, self.trials):
            return []
        bar = math.log10(STOP_EVIDENCE)
        return [name for name, side in self.sides.items() if side.evidence >= bar]

    def deterministic(self) -> bool:
        """A side's identical twin pairs too long and too many to be chance."""
        return bool(self.deterministic_sides())


#: What a ledger row reference reads back: a row of ``responses.jsonl`` (by byte offset, or
#: by index into rows held in memory).
ReadRow = Callable[[int], Mapping[str, Any]]
#: Append a row and return its reference for a ``ReadRow``.
AddRow = Callable[[ResponseRow], int]
AppendRow = Callable[[ResponseRow], Any]


class _StageRows(Mapping[tuple[int, int], ResponseRow]):
    """One stage's latest row per slot, read back by reference when asked for."""

    def __init__(self, ledger: Ledger, stage: str) -> None:
        self._ledger = ledger
        self._stage = stage

    def __getitem__(self, key: tuple[int, int]) -> ResponseRow:
        row = self._ledger.row(key[0], key[1], self._stage)
        if row is None:
            raise KeyError(key)
        return row

    def __iter__(self) -> Iterator[tuple[int, int]]:
        refs = self._ledger.refs[self._stage]
        for trial, slot, index in self._ledger.slot_indexes():
            if refs[index] >= 0:
                yield trial, slot

    def __len__(self) -> int:
        return sum(1 for _ in self)


class Ledger:
    """What bt-generate keeps of ``responses.jsonl`` while it runs, in a few bytes per slot
    (90,000 slots, and no row held): per slot and stage, whether it is answered
    and a reference to the row that counts (the latest ok row, else the latest failure row),
    read back by ``read_row`` when a row is needed (a launder source, the blinded view, why a
    slot failed). Answers like ``SlotState`` (``generated``, ``laundered``, ``answered``).

    With ``requests``, a slot is answered only when its latest ok row answers the request the
    slot makes now (:meth:`SlotRequests.matches`); one that answers another request (the
    design was edited) is *stale*: counted by :meth:`stale`, and pending like a missing slot.
    A newer answer of a slot makes its laundering pending again."""

    def __init__(
        self, design: DesignRecord, read_row: ReadRow, requests: SlotRequests | None = None
    ) -> None:
        self.design = design
        self.options = protocol_of(design).options
        self.position = trial_positions(design)
        size = len(design["arrangement"]) * self.options
        self.refs = {stage: array("q", [-1]) * size for stage in ("generate", LAUNDER)}
        self.ok = {stage: bytearray(size) for stage in ("generate", LAUNDER)}
        #: Per slot and stage: some ok row is held (current or stale).
        self.held = {stage: bytearray(size) for stage in ("generate", LAUNDER)}
        self.read_row = read_row
        self.requests = requests
        self.generated = _StageRows(self, "generate")
        self.laundered = _StageRows(self, LAUNDER)

    def index(self, trial: int, slot: int) -> int | None:
        position = self.position(trial)
        if position is None or type(slot) is not int or not 0 < slot <= self.options:
            return None
        return position * self.options + slot - 1

    def slot_indexes(self) -> Iterator[tuple[int, int, int]]:
        numbers = _arrangement_values(self.design, "trial")
        for position, trial in enumerate(numbers):
            for slot in range(1, self.options + 1):
                yield trial, slot, position * self.options + slot - 1

    def record(self, row: Mapping[str, Any], ref: int, current: bool | None = None) -> bool:
        """Take one more row (in file order); True when it answers its slot, as the slot asks
        now, where it did not before (a later failure row cannot undo an answer).
        ``current``: whether it answers what its slot asks now, when the caller knows (a row
        just made for it); else it is checked."""
        stage = LAUNDER if row.get("stage") == LAUNDER else "generate"
        index = self.index(row["trial"], row["slot"])
        if index is None:
            return False
        if row["status"] != "ok":
            if not self.held[stage][index]:
                self.refs[stage][index] = ref
            return False
        if current is None:
            current = self._current(row, stage, index)
        was = self.ok[stage][index]
        self.refs[stage][index] = ref
        self.held[stage][index] = 1
        self.ok[stage][index] = current
        if stage == "generate" and self.held[LAUNDER][index]:
            # A newer answer: the laundering of the one it replaces no longer counts.
            self.refs[LAUNDER][index] = -1
            self.held[LAUNDER][index] = self.ok[LAUNDER][index] = 0
        return current and not was

    def _current(self, row: Mapping[str, Any], stage: str, index: int) -> bool:
        if self.requests is None:
            return True
        slot = Slot(row["trial"], row["slot"], row["side"], self._prompt_id(index))
        if stage != LAUNDER:
            return self.requests.matches(row, Work(slot, "generate"))
        if not self.ok["generate"][index]:
            return False  # the laundering of an answer that no longer counts
        source = original_text(self.read_row(self.refs["generate"][index]))
        return self.requests.matches(row, Work(slot, LAUNDER, source))

    def _prompt_id(self, index: int) -> str:
        arrangement: Any = self.design["arrangement"]
        position = index // self.options
        if isinstance(arrangement, Columns):
            return str(arrangement.value(position, "prompt_id"))
        return str(arrangement[position]["prompt_id"])

    def stale(self) -> dict[str, int]:
        """Slots whose latest answer answers another request than the slot makes now, per
        role (``A``, ``B``, ``launder``; the laundering of a stale answer is not counted)."""
        counts: dict[str, int] = {}
        protocol = protocol_of(self.design)
        for position, entry in enumerate(_arrangement_entries(self.design)):
            sides = protocol.slot_sides(entry)
            for number, side in enumerate(sides):
                index = position * self.options + number
                for stage, role in (("generate", side), (LAUNDER, LAUNDER)):
                    if self.held[stage][index] and not self.ok[stage][index]:
                        if stage == LAUNDER and not self.ok["generate"][index]:
                            continue
                        counts[role] = counts.get(role, 0) + 1
        return counts

    def answered(self, slot: Slot, stage: str) -> ResponseRow | None:
        index = self.index(slot.trial, slot.slot)
        stage = LAUNDER if stage == LAUNDER else "generate"
        if index is None or not self.ok[stage][index]:
            return None
        return cast(ResponseRow, self.read_row(self.refs[stage][index]))

    def is_answered(self, slot: Slot, stage: str) -> bool:
        index = self.index(slot.trial, slot.slot)
        return index is not None and bool(self.ok[stage][index])

    def row(self, trial: int, slot: int, stage: str) -> ResponseRow | None:
        index = self.index(trial, slot)
        if index is None or self.refs[stage][index] < 0:
            return None
        return cast(ResponseRow, self.read_row(self.refs[stage][index]))

    def pending(self, answered: bytes | None = None, only: str | None = None) -> Iterator[Work]:
        """What is still missing (``pending_work``, one slot at a time; ``only`` one stage).
        ``answered``: the slots answered when the run began, the only ones whose laundering
        this offers (a slot answered since has had its laundering queued by whoever
        answered it)."""
        launder = self.design["normalization"]["launder"] is not None and only != "generate"
        generated, laundered = self.ok["generate"], self.ok[LAUNDER]
        before: bytes | bytearray = generated if answered is None else answered
        for slot in iter_slots(self.design):
            index = self.index(slot.trial, slot.slot)
            if index is None:
                continue
            if not generated[index]:
                if only != LAUNDER:
                    yield Work(slot, "generate")
            elif launder and before[index] and not laundered[index]:
                source = self.read_row(self.refs["generate"][index])
                yield Work(slot, LAUNDER, original_text(source))

    def missing(self) -> int:
        return sum(1 for _ in self.pending())


def _arrangement_entries(design: DesignRecord) -> Iterator[Mapping[str, Any]]:
    arrangement: Any = design["arrangement"]
    if isinstance(arrangement, Columns):
        return (arrangement[i] for i in range(len(arrangement)))
    return iter(arrangement)


def check_row_fits(
    design: DesignRecord, ledger: Ledger, row: Mapping[str, Any], number: int
) -> None:
    """``check_rows_match_design`` for one row (the ``number``-th of the file)."""
    index = ledger.index(row["trial"], row["slot"])
    side = None
    if index is not None:
        entry = design["arrangement"][index // ledger.options]
        side = protocol_of(design).slot_sides(entry)[row["slot"] - 1]
    if side is None or side != row["side"]:
        raise BadInput(
            f"responses.jsonl row {number} (trial {row['trial']}, slot {row['slot']}, "
            f"side {row['side']}) does not belong to this design; use a new run directory"
        )


@dataclass
class RowCounts:
    """Rows, the HTTP requests behind them, and failure rows: what a session's summary and
    ledger entry need of its rows."""

    rows: int = 0
    requests: int = 0
    failed: int = 0

    def add(self, row: Mapping[str, Any]) -> None:
        self.rows += 1
        self.requests += int(row.get("attempts") or 0)
        self.failed += row["status"] != "ok"

    @classmethod
    def of(cls, rows: Iterable[Mapping[str, Any]] | RowCounts) -> RowCounts:
        if isinstance(rows, RowCounts):
            return rows
        counts = cls()
        for row in rows:
            counts.add(row)
        return counts


def identical_draws(design: DesignRecord, state: SlotState) -> int:
    """Triangle trials whose two same-model draws came back identical (whitespace aside)."""
    return DrawCollisions.for_design(design, state).identical


def _over(collisions: DrawCollisions) -> str:
    if collisions.pairs == collisions.trials:
        return f"of all {collisions.trials} triangle trials"
    return f"of the {collisions.pairs} triangle trials fetched (of {collisions.trials})"


def _side_count(name: str, side: SideCollisions, model: str) -> str:
    return (
        f"side {name} ({model}) in {side.identical} of its {side.pairs}, up to "
        f"{reportfmt.count(side.longest, 'word')} long"
    )


def deterministic_endpoint_error(design: DesignRecord, collisions: DrawCollisions) -> CheckFailed:
    names = collisions.deterministic_sides()
    counts = "; ".join(
        _side_count(name, collisions.sides[name], design["models"][name]["model"]) for name in names
    )
    endpoint = "the endpoint is" if len(names) == 1 else "the endpoints are"
    return CheckFailed(
        f"{collisions.identical} {_over(collisions)} got two identical answers from the same "
        f"model: {counts}; answers that long do not repeat by chance, so {endpoint} "
        "deterministic (temperature ignored or 0, or a cache), the odd response is found by "
        "the identical pair without reading, and the run would measure that, not the models; "
        "use --protocol pair for this endpoint"
    )


def collision_notice(collisions: DrawCollisions) -> str | None:
    """What to say when some same-model draws collide but no side is shown deterministic
    (short answers at a real temperature): the count, and what it does to the test."""
    if not collisions.identical or collisions.deterministic():
        return None
    k = collisions.identical
    trials = "trial" if k == 1 else "trials"
    longest = max(side.longest for side in collisions.sides.values())
    if longest > 2 * FREE_WORDS:
        why = (
            f"the longest {reportfmt.count(longest, 'word')}: chance, or prompts with one right "
            "wording"
        )
    elif k == collisions.pairs and k > 1:
        why = "every one; answers this short cannot tell a deterministic endpoint from chance"
    else:
        why = "short answers collide by chance"
    return (
        f"note: {k} {_over(collisions)} got two identical answers from the same model ({why}); "
        f"in {'that' if k == 1 else 'those'} {k} {trials} the odd one can be found by the "
        "identical pair without reading, and bt-audit's duplicate spotter will do so and "
        "report it as a tell"
    )


# --------------------------------------------------------------------------- imported outputs


def _variant_for(design: DesignRecord, slot: Slot) -> str:
    """Which file answers a slot: the doubled side's two triangle slots take variants 1 and 2
    in slot order; every other slot takes the candidate's first output."""
    variants: list[str] = sorted(design["source"]["files"][slot.prompt_id][slot.side])
    if design["protocol"] != "triangle":
        return variants[0]
    entry = design["arrangement"][slot.trial - 1]
    if slot.side != entry["doubled"]:
        return variants[0]
    twins = [p for p in (1, 2, 3) if p != entry["odd_position"]]
    return str(twins.index(slot.slot) + 1)


def import_rows(
    design: DesignRecord, state: SlotState | Ledger, read: Callable[[str, str, str], str]
) -> list[ResponseRow]:
    """``responses.jsonl`` rows for a --from-dirs design's unanswered slots (``state``'s
    answered slots are skipped: a ``Ledger``'s answers are the rows still current).

    ``read(side, item, variant)`` returns a file's text (``outputs.imported_text`` refuses a
    file that changed since the design).
    """
    # Nothing was asked: no tokens, latency, attempts or seed to record.
    measured: _Measured = {
        "finish_reason": None,
        "usage": None,
        "latency_ms": None,
        "attempts": 0,
        "seed": None,
    }
    rows = []
    for slot in iter_slots(design):
        if state.answered(slot, "generate") is not None:
            continue
        variant = _variant_for(design, slot)
        raw = read(slot.side, slot.prompt_id, variant)
        model = design["models"][slot.side]["model"]
        row = _row(design, slot, "generate", model, "imported", measured, raw)
        # What determined it: the file, by the hash the design holds (read() refused it if
        # the file no longer has it).
        row["source_sha256"] = design["source"]["files"][slot.prompt_id][slot.side][variant]
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- fetching


def too_long_row_error(work: Work, error: PromptTooLong) -> str:
    """A too-long failure row's ``error``: the trial and prompt, then the server's words (no
    side or model: the final message repeats it before any judging)."""
    said = error.server_message or str(error)
    return (
        f"trial {work.slot.trial}, prompt {work.slot.prompt_id}: the prompt is too long for "
        f"the server (HTTP {error.status}: {said})"
    )


async def _worker(
    design: DesignRecord,
    client: ChatClient,
    take: Callable[[], Work | None],
    queue: asyncio.Queue[Work | None] | None,
    prompt_text: Callable[[str], str],
    on_answer: Callable[[Work, Completion, str], Awaitable[None]],
) -> None:
    """Ask for work from ``take`` until it has none, then (the launder role) from ``queue``
    until it holds the end mark. Each answer goes to ``on_answer`` (work, completion, model)
    as it arrives, which returns once it is recorded: only then does the worker ask for its
    next piece of work."""
    while True:
        work = take()
        if work is None:
            if queue is None:
                return
            work = await queue.get()
            if work is None:
                return
        role = LAUNDER if work.stage == LAUNDER else work.slot.side
        if work.stage == LAUNDER:
            messages: list[ChatMessage] = launder_messages(work.source or "")  # type: ignore[assignment]
            seed = None
        else:
            slot = work.slot
            text = prompt_text(slot.prompt_id)
            messages = messages_for(design, text, slot.side, slot.prompt_id)
            seed = slot_seed(design["seed"], work.slot.trial, work.slot.slot)
        # "a per-slot seed where the server accepts one": the client asks again without it
        # when the server refuses it (the row then records seed null).
        try:
            completion = await client.complete(role, messages, seed=seed)
        except PromptTooLong as error:
            # One prompt too long for the model is this slot's failure, not the run's.
            completion = Completion(
                role,
                "too_long",
                "",
                None,
                None,
                0.0,
                error.attempts or 1,
                error.status,
                error=too_long_row_error(work, error),
                seed=seed if client.sends_seed(role) else None,
            )
        await on_answer(work, completion, client.endpoint(role).model)


class _Recorder:
    """The one writer of a run: a task that records the answers the workers hand it
    (``record``), one at a time, in the order they arrived.

    A worker waits in ``record`` until its answer is recorded (appended: in the OS's buffers,
    so a kill -9 cannot lose it) before it asks for its next slot, so at any moment at most
    one answer per worker is received and not yet on disk. A worker cancelled while it waits
    (Ctrl-C, another request's 401) leaves its answer queued: ``close`` records everything
    queued before it returns. A recording that fails (a full disk) sets ``failed``, which
    stops the run as a failing worker would; the answers still queued then stay unrecorded
    (a rerun asks for them again)."""

    def __init__(self, record: Callable[[Work, Completion, str], None]) -> None:
        self._record = record
        self._queue: asyncio.Queue[tuple[Work, Completion, str, asyncio.Future[None]] | None]
        self._queue = asyncio.Queue()
        self.failed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._write())

    async def record(self, work: Work, completion: Completion, model: str) -> None:
        """Hand an answer to the writer and wait until it is recorded."""
        written = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((work, completion, model, written))
        await written

    async def _write(self) -> None:
        while (item := await self._queue.get()) is not None:
            work, completion, model, written = item
            try:
                self._record(work, completion, model)
            except Exception as error:  # the run stops on it (``failed`` is awaited)
                if not self.failed.done():
                    self.failed.set_exception(error)
                if not written.done():
                    written.set_exception(error)
                return
            if not written.done():
                written.set_result(None)

    async def close(self) -> None:
        """Record every answer still queued, then end the writer."""
        self._queue.put_nowait(None)
        await self._task
        if self.failed.done():
            self.failed.exception()  # raised already, by the worker whose answer it was


def _memory_ledger(
    design: DesignRecord, state: SlotState, append: AppendRow
) -> tuple[Ledger, AddRow]:
    """A ledger over rows held in memory (a caller that gives a ``SlotState``), kept in step
    with ``state``."""
    rows: list[Mapping[str, Any]] = []
    ledger = Ledger(design, rows.__getitem__, SlotRequests(design))
    for row in [*state.generated.values(), *state.laundered.values()]:
        rows.append(row)
        ledger.record(row, len(rows) - 1)

    def add(row: ResponseRow) -> int:
        append(row)
        state.record(row)
        rows.append(row)
        return len(rows) - 1

    return ledger, add


def _collisions_of(design: DesignRecord, ledger: Ledger) -> DrawCollisions:
    collisions = DrawCollisions.empty(design)
    for _, _, index in ledger.slot_indexes():
        if ledger.ok["generate"][index]:
            row = ledger.read_row(ledger.refs["generate"][index])
            collisions.take(row["trial"], row["slot"], row)
    return collisions


def _role_work(ledger: Ledger, answered: bytes, role: str) -> Iterator[Work]:
    if role == LAUNDER:
        return ledger.pending(answered, LAUNDER)
    return (w for w in ledger.pending(answered, "generate") if w.slot.side == role)


def _taker(works: Iterator[Work]) -> Callable[[], Work | None]:
    return lambda: next(works, None)


async def run_generation(
    design: DesignRecord,
    client: ChatClient,
    state: SlotState | Ledger,
    append: AppendRow | AddRow,
    *,
    concurrency: int,
    progress: Progress | None = None,
    on_update: Callable[[], None] | None = None,
    collisions: DrawCollisions | None = None,
) -> SlotState | Ledger:
    """Fetch every pending slot (and laundering), appending each row as it arrives.

    One worker pool per role, so a rate-limited side never holds up the other; each worker
    takes the next missing slot when it is free (the work is never listed whole). Raises
    ``CheckFailed`` as soon as the deterministic-endpoint guard trips, and lets fatal
    ``EndpointFailed`` errors (bad key, unknown model) through at once; rows already appended
    stay. ``state`` is a ``Ledger`` (``append`` then returns each row's reference) or a
    ``SlotState`` (rows kept in memory). Returns the updated state.
    """
    if isinstance(state, Ledger):
        ledger, add = state, cast(AddRow, append)
    else:
        ledger, add = _memory_ledger(design, state, cast(AppendRow, append))
    if collisions is None:
        collisions = _collisions_of(design, ledger)
    guard_error: list[CheckFailed] = []
    counts = progress if progress is not None else Progress(total=0)
    if collisions.deterministic():
        raise deterministic_endpoint_error(design, collisions)  # no more money on it
    roles = client.sides
    queue: asyncio.Queue[Work | None] | None = asyncio.Queue() if LAUNDER in roles else None
    requests = ledger.requests or SlotRequests(design)

    def on_result(work: Work, completion: Completion, model: str) -> None:
        row = response_record(design, work, completion, model, requests)
        newly = ledger.record(row, add(row), current=True)
        counts.done += 1
        counts.failed += row["status"] != "ok"
        if newly and work.stage != LAUNDER:
            if queue is not None:
                queue.put_nowait(Work(work.slot, LAUNDER, row.get("raw_text", row["text"])))
                counts.total += 1
            collisions.take(work.slot.trial, work.slot.slot, row)
            if not guard_error and collisions.deterministic():
                guard_error.append(CheckFailed("deterministic endpoint"))
        if on_update is not None:
            on_update()

    prompt_text = prompt_texts(design)
    answered = bytes(ledger.ok["generate"])  # laundering of later answers is queued
    recorder = _Recorder(on_result)
    tasks: dict[str, list[asyncio.Task[None]]] = {}
    for role in roles:
        take = _taker(_role_work(ledger, answered, role))
        tasks[role] = [
            asyncio.create_task(
                _worker(
                    design,
                    client,
                    take,
                    queue if role == LAUNDER else None,
                    prompt_text,
                    recorder.record,
                )
            )
            for _ in range(max(concurrency, client.ceiling(role)))
        ]
    await _drain_or_stop(design, queue, tasks, guard_error, collisions, recorder)
    return state


async def _drain_or_stop(
    design: DesignRecord,
    queue: asyncio.Queue[Work | None] | None,
    tasks: Mapping[str, list[asyncio.Task[None]]],
    guard_error: list[CheckFailed],
    collisions: DrawCollisions,
    recorder: _Recorder,
) -> None:
    try:
        await _drain(queue, tasks, guard_error, recorder)
    except CheckFailed as error:
        if not guard_error or error is not guard_error[0]:
            raise
        # Stated after every request in flight has ended: the count over all fetched trials.
        raise deterministic_endpoint_error(design, collisions) from None


async def _drain(
    queue: asyncio.Queue[Work | None] | None,
    tasks: Mapping[str, list[asyncio.Task[None]]],
    guard_error: list[CheckFailed],
    recorder: _Recorder,
) -> None:
    """Wait for the candidate roles, then close and drain the launder queue; cancel all on the
    first error or when the deterministic guard trips. Every answer received is recorded
    before this returns or raises (unless recording itself failed)."""
    everything = [t for group in tasks.values() for t in group]
    try:
        candidates = [t for role, group in tasks.items() if role != LAUNDER for t in group]
        await _wait_all(candidates, guard_error, recorder.failed)
        if queue is not None and LAUNDER in tasks:
            for _ in tasks[LAUNDER]:
                queue.put_nowait(None)
            await _wait_all(tasks[LAUNDER], guard_error, recorder.failed)
    finally:
        for task in everything:
            task.cancel()
        await asyncio.gather(*everything, return_exceptions=True)
        # What arrived before a stop was paid for: the writer records what is still queued.
        await recorder.close()


async def _wait_all(
    tasks: Sequence[asyncio.Task[None]],
    guard_error: list[CheckFailed],
    failed: asyncio.Future[None],
) -> None:
    """Wait until every task has ended, raising the first error (of a task, or ``failed``:
    the recorder's) and the deterministic guard's as soon as they happen."""
    pending: set[asyncio.Future[None]] = set(tasks)
    while pending:
        done, _ = await asyncio.wait(
            pending | {failed}, timeout=0.25, return_when=asyncio.FIRST_COMPLETED
        )
        for task in done:
            if task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
        pending -= done
        if guard_error:
            raise guard_error[0]


def endpoint_failure_summary(design: DesignRecord, state: SlotState | Ledger) -> EndpointFailed:
    """Exit-3 error for a run that ended with slots still unanswered. Prompts too long for the
    server are named by trial and prompt (never by side or slot: this is shown before judging)."""
    missing = _missing(design, state)
    too_long: dict[int, str] = {}
    said = last_error = ""
    n_long = 0
    for work in missing:
        rows = state.laundered if work.stage == LAUNDER else state.generated
        row: Mapping[str, Any] = rows.get((work.slot.trial, work.slot.slot)) or {}
        if row.get("kind") == "too_long":
            too_long[work.slot.trial] = work.slot.prompt_id
            n_long += 1
            said = str(row.get("error", "")).partition(": ")[2]
        elif row.get("error"):
            last_error = f"; last error: {row['error']}"
    rest = "what was fetched is kept, rerun bt-generate to fetch the rest"
    if not too_long:
        return EndpointFailed(
            f"{len(missing)} slot(s) still unanswered after retries{last_error}; {rest}"
        )
    named = ", ".join(f"trial {t} (prompt {p})" for t, p in sorted(too_long.items()))
    these = "that prompt" if len(too_long) == 1 else "those prompts"
    others = len(missing) - n_long
    more = f"; {others} more after retries{last_error}" if others else ""
    return EndpointFailed(
        f"{len(missing)} slot(s) still unanswered: {named}: {said}; shorten or drop {these} "
        f"in a new design, or give the server a larger context{more}; {rest}"
    )


# --------------------------------------------------------------------------- summary and cost


def _role_model(design: DesignRecord, role: str) -> str:
    if role == LAUNDER:
        return str(design["normalization"]["launder"]["model"])
    return str(design["models"][role]["model"])


def _cost(price: tuple[float, float], tokens_in: float, tokens_out: float) -> float:
    """Dollars, for prices in dollars per million tokens (in, out)."""
    return (tokens_in * price[0] + tokens_out * price[1]) / 1e6


class Totals:
    """Per-role totals over rows fed one at a time (``generation.json``'s ``roles``)."""

    def __init__(self, design: DesignRecord) -> None:
        self.roles = ["A", "B"] + ([LAUNDER] if design["normalization"]["launder"] else [])
        self.band = design["normalization"]["length_band"]
        self.summary: dict[str, dict[str, Any]] = {}
        for role in self.roles:
            self.summary[role] = {
                "model": _role_model(design, role),
                "responses": 0,
                "failures": 0,
                "requests": 0,
                "retries": 0,
                "prompt_tokens": 0,
                "completion_tokens": 0,
                "truncated": 0,
                "refusals": 0,
                "outside_length_band": 0 if self.band and role != LAUNDER else None,
                "mean_latency_ms": None,
                "cost": None,
            }
        self.latency_sum: dict[str, float] = {role: 0 for role in self.roles}
        self.latency_count: dict[str, int] = {role: 0 for role in self.roles}

    def add(self, row: Mapping[str, Any]) -> None:
        role = LAUNDER if row.get("stage") == LAUNDER else row["side"]
        entry = self.summary[role]
        entry["requests"] += row["attempts"]
        entry["retries"] += max(0, row["attempts"] - 1)
        usage = row.get("usage") or {}
        entry["prompt_tokens"] += usage.get("prompt_tokens") or 0
        entry["completion_tokens"] += usage.get("completion_tokens") or 0
        if row["status"] != "ok":
            entry["failures"] += 1
            return
        entry["responses"] += 1
        entry["truncated"] += bool(row.get("truncated"))
        entry["refusals"] += row.get("kind") == "refusal"
        if row.get("latency_ms") is not None:
            self.latency_sum[role] += row["latency_ms"]  # summed in file order, as sum() does
            self.latency_count[role] += 1
        if entry["outside_length_band"] is not None:
            band = self.band
            entry["outside_length_band"] += outside_band(row["text"], band["lo"], band["hi"])

    def result(self, prices: Mapping[str, tuple[float, float]]) -> dict[str, dict[str, Any]]:
        summary = {role: dict(entry) for role, entry in self.summary.items()}
        for role, entry in summary.items():
            if self.latency_count[role]:
                mean = self.latency_sum[role] / self.latency_count[role]
                entry["mean_latency_ms"] = round(mean, 3)
            if role in prices:
                entry["cost"] = _cost(
                    prices[role], entry["prompt_tokens"], entry["completion_tokens"]
                )
        return summary


def summarize(
    design: DesignRecord,
    rows: Iterable[Mapping[str, Any]],
    prices: Mapping[str, tuple[float, float]],
) -> dict[str, dict[str, Any]]:
    """Per-role totals over every row in ``responses.jsonl`` (all runs, resumed ones too)."""
    totals = Totals(design)
    for row in rows:
        totals.add(row)
    return totals.result(prices)


def generation_record(
    design: DesignRecord,
    design_sha256: str,
    rows: Sequence[Mapping[str, Any]],
    prices: Mapping[str, tuple[float, float]],
    wall_seconds: float,
    sessions: Sequence[JsonObject] | None = None,
) -> GenerationRecord:
    """``generation.json``: totals over every row, and whether every slot is answered.

    ``sessions`` is the ledger (one entry per bt-generate run that fetched something: its
    wall time, requests and rows), a measurement carried from the file as ``wall_seconds`` is.
    """
    state = SlotState.from_rows(rows)
    identical = identical_draws(design, state) if design["protocol"] == "triangle" else None
    return _generation(
        design,
        design_sha256,
        not pending_work(design, state),
        summarize(design, rows, prices),
        identical,
        prices,
        wall_seconds,
        sessions,
    )


def _generation(
    design: DesignRecord,
    design_sha256: str,
    complete: bool,
    roles: dict[str, dict[str, Any]],
    identical: int | None,
    prices: Mapping[str, tuple[float, float]],
    wall_seconds: float,
    sessions: Sequence[JsonObject] | None,
) -> GenerationRecord:
    record: GenerationRecord = {
        "schema": schema_tag("generation"),
        "design_sha256": design_sha256,
        "complete": complete,
        "wall_seconds": round(wall_seconds, 3),
        "prices": {role: {"input": p[0], "output": p[1]} for role, p in prices.items()},
        "roles": roles,
        "identical_draws": identical,
    }
    if sessions is not None:
        record["sessions"] = [dict(session) for session in sessions]
    return record


def session_entry(rows: Sequence[Mapping[str, Any]] | RowCounts, wall_seconds: float) -> JsonObject:
    """One ledger entry: the rows a session appended, the HTTP requests behind them."""
    counts = RowCounts.of(rows)
    return {
        "wall_seconds": round(wall_seconds, 3),
        "requests": counts.requests,
        "rows": counts.rows,
    }


def ledger(
    previous: Mapping[str, Any] | None,
    design_sha256: str,
    earlier_rows: Sequence[Mapping[str, Any]] | RowCounts,
    session: JsonObject | None,
) -> tuple[list[JsonObject] | None, float]:
    """The sessions and total wall time after this session (``None``: it fetched nothing).

    A ``generation.json`` from before the ledger counts as one session holding every row
    that was on disk before this one; one that fetched nothing since keeps no ledger (so a
    rerun leaves its bytes as they are).
    """
    sessions: list[JsonObject] | None = None
    wall = 0.0
    if previous is not None and previous.get("design_sha256") == design_sha256:
        wall = float(previous.get("wall_seconds", 0.0))
        if "sessions" in previous:
            sessions = [dict(entry) for entry in previous["sessions"]]
        elif session is not None:
            sessions = [session_entry(earlier_rows, wall)]
    if session is not None:
        sessions = [*(sessions or []), session]
        wall += float(session["wall_seconds"])
    return sessions, wall


def recorded_prices(
    previous: Mapping[str, Any] | None, design_sha256: str
) -> dict[str, tuple[float, float]]:
    """Prices an earlier session recorded (kept unless new ones are given)."""
    if previous is None or previous.get("design_sha256") != design_sha256:
        return {}
    return {role: (p["input"], p["output"]) for role, p in previous.get("prices", {}).items()}


def _said_prices(
    previous: Mapping[str, Any] | None,
    given: Mapping[str, tuple[float, float]],
    prices: Mapping[str, tuple[float, float]],
) -> str:
    recorded = set((previous or {}).get("prices", {}))
    kept = sorted(set(prices) - set(given))
    replaced = sorted(role for role in given if role in recorded)
    added = sorted(role for role in given if role not in recorded)
    said = f"; recorded prices kept for {', '.join(kept)}" if kept else ""
    said += f"; prices replaced for {', '.join(replaced)}" if replaced else ""
    if previous is not None and added:
        said += f"; prices recorded for {', '.join(added)}"
    return said


def session_summary(
    fetched: Sequence[Mapping[str, Any]] | RowCounts,
    total_rows: int,
    previous: Mapping[str, Any] | None,
    sessions: Sequence[JsonObject] | None,
    given: Mapping[str, tuple[float, float]],
    prices: Mapping[str, tuple[float, float]],
    changed: bool,
) -> str:
    """What a session did, the same whichever side is which: totals over both sides only
    (tokens, costs, timings and failures per side are in generation.json, for after judging);
    a second line for a resumed run: the ledger and the prices."""
    said_prices = _said_prices(previous, given, prices)
    counts = RowCounts.of(fetched)
    if not counts.rows:
        state = "updated" if changed else "unchanged"
        return (
            f"nothing to fetch ({reportfmt.count(total_rows, 'row')} on disk); "
            f"generation.json {state}{said_prices}"
        )
    line = (
        f"fetched {reportfmt.count(counts.rows, 'row')} ({counts.failed} failed) in "
        f"{reportfmt.count(counts.requests, 'request')}; "
        "per-side figures are in generation.json, for after judging"
    )
    if sessions is not None and len(sessions) > 1:
        line += f"\nresumed: session {len(sessions)} added to the ledger{said_prices}"
    return line


def check_not_deterministic(
    design: DesignRecord, state: SlotState | Ledger, collisions: DrawCollisions | None = None
) -> None:
    """Raise the deterministic-endpoint stop if the rows on disk already show it."""
    if collisions is None:
        assert isinstance(state, SlotState)
        collisions = DrawCollisions.for_design(design, state)
    if collisions.deterministic():
        raise deterministic_endpoint_error(design, collisions)


def check_finished(
    design: DesignRecord, state: SlotState | Ledger, collisions: DrawCollisions | None = None
) -> None:
    """Raise why the blinded view cannot be written yet (deterministic endpoint: exit 1;
    slots still unanswered: exit 3); return when every slot is answered."""
    check_not_deterministic(design, state, collisions)
    if _missing(design, state):
        raise endpoint_failure_summary(design, state)


def _missing(design: DesignRecord, state: SlotState | Ledger) -> list[Work]:
    if isinstance(state, Ledger):
        return list(state.pending())
    return pending_work(design, state)


def estimate_cost(
    design: DesignRecord, prices: Mapping[str, tuple[float, float]]
) -> dict[str, dict[str, float]]:
    """A rough pre-run estimate per role: input tokens ~ words x 4/3 of system + prompt;
    output tokens = the design's token limit, or ``ASSUMED_OUTPUT_TOKENS`` without one."""
    prompt_text = prompt_texts(design)
    system_words = {side: count_words(system_prompt(design, side) or "") for side in SIDES}
    estimate: dict[str, dict[str, float]] = {}
    imported = design["source"]["kind"] == "dirs"
    prompt_words: dict[str, int] = {}  # a prompt is asked in every slot of its trial
    for slot in iter_slots(design):
        roles = [] if imported else [slot.side]
        roles += [LAUNDER] if design["normalization"]["launder"] else []
        for role in roles:
            params = design["models"][slot.side].get("params", {})
            output = params.get("max_tokens") or ASSUMED_OUTPUT_TOKENS
            if role == LAUNDER:
                words_in = output * 0.75 + 80
            else:
                words = prompt_words.get(slot.prompt_id)
                if words is None:
                    words = prompt_words[slot.prompt_id] = count_words(prompt_text(slot.prompt_id))
                words_in = system_words[slot.side] + words
            entry = estimate.setdefault(role, {"input_tokens": 0.0, "output_tokens": 0.0})
            entry["input_tokens"] += words_in * 4 / 3
            entry["output_tokens"] += output
    for role, entry in estimate.items():
        if role in prices:
            entry["cost"] = _cost(prices[role], entry["input_tokens"], entry["output_tokens"])
    return estimate


def parse_prices(texts: Mapping[str, str | None]) -> dict[str, tuple[float, float]]:
    """``{role: "IN,OUT"}`` as given to ``--price-ROLE`` -> dollars per million tokens, in
    and out; refuses anything but two finite numbers >= 0."""
    prices = {}
    for role, text in texts.items():
        if text is None:
            continue
        try:
            parts = [float(p) for p in text.split(",")]
        except ValueError:
            parts = []
        if len(parts) != 2 or not all(math.isfinite(p) and p >= 0 for p in parts):
            option = f"--price-{role.lower()}"
            raise BadInput(
                f"{option}: expected IN,OUT dollars per million tokens (two finite numbers "
                f">= 0), e.g. 2.5,10; got {text!r}"
            )
        prices[role] = (parts[0], parts[1])
    return prices


# --------------------------------------------------------------------------- the stage

_ROLE_ORDER = ("A", "B", LAUNDER)


@dataclass(frozen=True, slots=True)
class FetchOptions:
    """How hard to ask: requests in flight per endpoint, seconds of silence before giving up
    on an answer, requests started per minute, retries per request."""

    concurrency: int = DEFAULT_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    rpm: float | None = None
    max_retries: int = DEFAULT_POLICY.max_retries
    #: Per side: ``--a-concurrency``, ``--a-rpm`` (the shared ones for the rest),
    #: and ``--a-header-env NAME:ENVVAR`` headers (values read when sending, never written).
    side_concurrency: Mapping[str, int] = field(default_factory=dict)
    side_rpm: Mapping[str, float] = field(default_factory=dict)
    header_env: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    #: ``--refetch-changed``: ask again for the slots whose answer on disk was made for
    #: another request than the slot makes now (else such answers refuse the run).
    refetch_changed: bool = False


def side_transport(given: dict[str, Any]) -> dict[str, Any]:
    """``FetchOptions`` keywords from the per-side transport options, popped from ``given``
    (``a_concurrency``, ``b_rpm``, ``a_header_env``...; None or empty: not given), and
    ``refetch_changed`` (False when not given)."""
    found: dict[str, Any] = {"side_concurrency": {}, "side_rpm": {}, "header_env": {}}
    found["refetch_changed"] = bool(given.pop("refetch_changed", False))
    for side in SIDES:
        lower = side.lower()
        concurrency = given.pop(f"{lower}_concurrency", None)
        rpm = given.pop(f"{lower}_rpm", None)
        headers = given.pop(f"{lower}_header_env", ()) or ()
        if concurrency is not None:
            found["side_concurrency"][side] = concurrency
        if rpm is not None:
            if not (math.isfinite(rpm) and rpm > 0):
                raise BadInput(f"--{lower}-rpm: expected a finite number > 0, got {rpm}")
            found["side_rpm"][side] = rpm
        found["header_env"][side] = tuple(
            parse_header_env(f"--{lower}-header-env", item) for item in headers
        )
    return found


@dataclass(frozen=True, slots=True)
class StageIO:
    """Everything the stage does outside itself, as callbacks (the CLI gives them files and
    stderr): ``open_responses`` opens ``responses.jsonl`` for appending (opened only when
    there is something to append); ``write_generation`` writes ``generation.json`` unless it
    already holds that record, returning whether it wrote; ``read_imported(side, item,
    variant)`` reads a --from-dirs output; ``say`` prints a line; ``on_progress(progress,
    final)`` redraws a progress display."""

    open_responses: Callable[[], AbstractContextManager[AppendRow]]
    write_generation: Callable[[GenerationRecord], bool]
    read_imported: Callable[[str, str, str], str]
    say: Callable[[str], None] = field(default=lambda _: None)
    on_progress: Callable[[Progress, bool], None] | None = None
    #: Reads a row of ``responses.jsonl`` back by the byte offset its line starts at (the
    #: ``append`` of ``open_responses`` then returns each row's offset, and ``existing``
    #: comes as ``(offset, row)`` pairs); None: rows are kept in memory (small runs, tests).
    read_row: ReadRow | None = None


class TrialsView:
    """``trials.jsonl`` to be written: iterated one trial at a time (each reads its rows back
    from ``responses.jsonl``), so 30,000 trials are never held at once. Compares equal to a
    list of the same records."""

    def __init__(self, design: DesignRecord, state: SlotState | Ledger) -> None:
        self.design = design
        self.state = state

    def __len__(self) -> int:
        return len(self.design["arrangement"])

    def __iter__(self) -> Iterator[TrialRecord]:
        return iter_trials_view(self.design, self.state)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TrialsView | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class _Book:
    """What a session knows of ``responses.jsonl``: the ledger, the totals, the draw
    collisions and the row counts (before it and in it), built from the rows on disk and kept
    up to date as rows are appended (each fed once, none held)."""

    def __init__(self, design: DesignRecord, read_row: ReadRow | None) -> None:
        self.design = design
        self.memory: list[Mapping[str, Any]] | None = [] if read_row is None else None
        reader = read_row if read_row is not None else self._from_memory
        self.ledger = Ledger(design, reader, SlotRequests(design))
        self.totals = Totals(design)
        self.collisions = DrawCollisions.empty(design)
        self.earlier = RowCounts()
        self.session = RowCounts()

    def _from_memory(self, ref: int) -> Mapping[str, Any]:
        assert self.memory is not None
        return self.memory[ref]

    @classmethod
    def open(cls, design: DesignRecord, existing: Iterable[Any], read_row: ReadRow | None) -> _Book:
        """From the rows on disk (``(offset, row)`` pairs when ``read_row`` reads by offset),
        each checked against the design before anything is appended."""
        book = cls(design, read_row)
        for number, item in enumerate(existing, start=1):
            ref, row = (len(book.memory), item) if book.memory is not None else item
            check_row_fits(design, book.ledger, row, number)
            if book.memory is not None:
                book.memory.append(row)
            book.earlier.add(row)
            book._take(row, ref)
        return book

    def _take(self, row: Mapping[str, Any], ref: int) -> bool:
        self.totals.add(row)
        newly = self.ledger.record(row, ref)
        if newly and row.get("stage") != LAUNDER:
            self.collisions.take(row["trial"], row["slot"], row)
        return newly

    def adder(self, append: Callable[[ResponseRow], Any]) -> AddRow:
        """``append`` for the run: counts each row and returns its reference (the ledger
        itself is updated by whoever records it)."""

        def add(row: ResponseRow) -> int:
            ref = append(row)
            if self.memory is not None:
                self.memory.append(row)
                ref = len(self.memory) - 1
            self.totals.add(row)
            self.session.add(row)
            return int(ref)

        return add

    def append_all(self, append: Callable[[ResponseRow], Any], rows: Iterable[ResponseRow]) -> None:
        """Append rows and take them into the ledger (imports: no request made)."""
        add = self.adder(append)
        for row in rows:
            ref = add(row)
            newly = self.ledger.record(row, ref, current=True)
            if newly and row.get("stage") != LAUNDER:
                self.collisions.take(row["trial"], row["slot"], row)


def generate_stage(
    design: DesignRecord,
    design_sha256: str,
    existing: Iterable[Any],
    previous: Mapping[str, Any] | None,
    given_prices: Mapping[str, tuple[float, float]],
    options: FetchOptions,
    io: StageIO,
) -> TrialsView:
    """bt-generate's work: fetch (or import) every slot still missing, record the session in
    ``generation.json``, and return the blinded view (``trials.jsonl``) once every slot is
    answered.

    ``existing`` are the rows already on disk (with ``io.read_row``: ``(offset, row)``
    pairs, read one at a time), ``previous`` the ``generation.json`` an earlier session
    wrote (its ledger and prices). Checks everything before appending anything: rows that
    do not fit the design and unset key variables are ``BadInput``. A run that stops
    (``EndpointFailed``, the deterministic guard's ``CheckFailed``, Ctrl-C) still records what
    it fetched in ``generation.json`` before the error goes on; a run that leaves slots
    unanswered raises (:func:`check_finished`); a triangle with some identical draws says so.
    Memory: a few bytes per slot (:class:`Ledger`); no row is held.
    """
    book = _Book.open(design, existing, io.read_row)
    stale = book.ledger.stale()
    if stale and not options.refetch_changed:
        raise BadInput(stale_rows_error(design, stale))
    if stale:
        io.say(refetch_notice(design, stale))
    endpoints = {
        role: replace(endpoint, header_env=options.header_env.get(role, ()))
        for role, endpoint in endpoints_for(design).items()
    }
    for role, endpoint in endpoints.items():
        endpoint.check_key(role)
    prices = recorded_prices(previous, design_sha256) | dict(given_prices)
    if design["source"]["kind"] == "dirs":
        rows = import_rows(design, book.ledger, io.read_imported)  # every file read first
        with io.open_responses() as append:
            book.append_all(append, rows)
        del rows
    started = time.monotonic()
    stopped = _fetch_missing(design, endpoints, book, prices, options, io)
    if stopped is not None and not book.session.rows:
        raise stopped
    fetched = book.session
    session = session_entry(fetched, time.monotonic() - started) if fetched.rows else None
    sessions, wall = ledger(previous, design_sha256, book.earlier, session)
    triangle = design["protocol"] == "triangle"
    record = _generation(
        design,
        design_sha256,
        book.ledger.missing() == 0,
        book.totals.result(prices),
        book.collisions.identical if triangle else None,
        prices,
        wall,
        sessions,
    )
    changed = io.write_generation(record)
    total = book.earlier.rows + fetched.rows
    io.say(session_summary(fetched, total, previous, sessions, given_prices, prices, changed))
    if stopped is not None:
        raise stopped
    check_finished(design, book.ledger, book.collisions)
    notice = collision_notice(book.collisions)
    if notice:
        io.say(notice)
    return TrialsView(design, book.ledger)


def _stale_counts(design: DesignRecord, stale: Mapping[str, int]) -> tuple[int, str]:
    roles = sorted(stale, key=_ROLE_ORDER.index)
    named = ", ".join(
        f"{'laundering' if role == LAUNDER else 'side ' + role}: {stale[role]}" for role in roles
    )
    return sum(stale.values()), named


def stale_rows_error(design: DesignRecord, stale: Mapping[str, int]) -> str:
    """Why answers on disk are not reused: how many, whose, and the two ways on."""
    total, named = _stale_counts(design, stale)
    dirs = design["source"]["kind"] == "dirs"
    if total == 1:
        made = "answer on disk was " + (
            "read from another file than its slot names now"
            if dirs
            else "made for another request than its slot makes now"
        )
    else:
        made = "answers on disk were " + (
            "read from other files than their slots name now"
            if dirs
            else "made for other requests than their slots make now"
        )
    return (
        f"{artifacts.RESPONSES}: {total} {made} ({named}; the design changed "
        "since they were recorded); use a new run directory, "
        "or rerun with --refetch-changed to ask for those slots again (the old rows stay in "
        f"{artifacts.RESPONSES}, no longer counted)"
    )


def check_rows_current(design: DesignRecord, rows: Sequence[Mapping[str, Any]]) -> None:
    """Refuse rows on disk whose answers were made for another request than their slot makes
    now (the batch modes: a live ``--refetch-changed`` asks for those slots again)."""
    ledger = Ledger(design, rows.__getitem__, SlotRequests(design))
    for ref, row in enumerate(rows):
        ledger.record(row, ref)
    stale = ledger.stale()
    if stale:
        raise BadInput(stale_rows_error(design, stale))


def refetch_notice(design: DesignRecord, stale: Mapping[str, int]) -> str:
    total, named = _stale_counts(design, stale)
    return (
        f"asking again for {reportfmt.count(total, 'slot')} whose answer on disk was made for "
        "another request "
        f"({named}); the old rows stay in {artifacts.RESPONSES}, no longer counted"
    )


def _fetch_missing(
    design: DesignRecord,
    endpoints: Mapping[str, Endpoint],
    book: _Book,
    prices: Mapping[str, tuple[float, float]],
    options: FetchOptions,
    io: StageIO,
) -> BaseException | None:
    """Fetch every pending slot; return the error that stopped the run early, if one did."""
    pending = book.ledger.missing()
    if not pending:
        return None
    check_not_deterministic(design, book.ledger, book.collisions)  # found on an earlier run
    _announce(estimate_cost(design, prices), pending, book.earlier.rows, io.say)
    progress = Progress(total=pending)
    try:
        with io.open_responses() as append:
            add = book.adder(append)
            asyncio.run(_fetch(design, endpoints, book, add, options, progress, io))
    except (EndpointFailed, CheckFailed, KeyboardInterrupt) as error:
        return error  # the ledger still records what this session fetched
    return None


async def _fetch(
    design: DesignRecord,
    endpoints: Mapping[str, Endpoint],
    book: _Book,
    add: AddRow,
    options: FetchOptions,
    progress: Progress,
    io: StageIO,
) -> None:
    policy = RetryPolicy(max_retries=options.max_retries)
    async with ChatClient(
        endpoints,
        concurrency=options.concurrency,
        rpm=options.rpm,
        timeout=options.timeout,
        policy=policy,
        side_concurrency=options.side_concurrency,
        side_rpm=options.side_rpm,
    ) as client:

        def update(final: bool = False) -> None:
            if io.on_progress is not None:  # no display (--quiet, not a terminal): no count
                progress.retries = client.counters().retries
                io.on_progress(progress, final)

        try:
            await run_generation(
                design,
                client,
                book.ledger,
                add,
                concurrency=options.concurrency,
                progress=progress,
                on_update=update,
                collisions=book.collisions,
            )
        finally:
            update(final=True)


def _announce(
    estimate: Mapping[str, Mapping[str, float]],
    pending: int,
    existing: int,
    say: Callable[[str], None],
) -> None:
    resumed = f" (resuming: {reportfmt.count(existing, 'row')} already on disk)" if existing else ""
    say(f"fetching {reportfmt.count(pending, 'response')}{resumed}")
    for role, entry in sorted(estimate.items(), key=lambda item: _ROLE_ORDER.index(item[0])):
        cost = f", about ${entry['cost']:.2f}" if "cost" in entry else ""
        say(
            f"  estimate for the whole run, {role}: ~{entry['input_tokens']:.0f} input and "
            f"<= {entry['output_tokens']:.0f} output tokens{cost}"
        )


# --------------------------------------------------------------------------- batch files


def batch_requests(
    design: DesignRecord, design_sha256: str, state: SlotState
) -> list[tuple[str, str, dict[str, object]]]:
    """``(side, custom_id, body)`` for every slot still unanswered: the exact body a live run
    sends for it (:meth:`Endpoint.request_body`, per-slot seed included). Laundering is not
    batched: it needs the answers first, and a live rerun launders them."""
    if design["source"]["kind"] == "dirs":
        raise BadInput("this design imports its outputs (--from-dirs): nothing to ask in a batch")
    asks = SlotRequests(design)  # the bodies only: no key is read
    requests = []
    for work in pending_work(design, state):
        if work.stage == LAUNDER:
            continue
        slot = work.slot
        body = asks.body(work)
        requests.append((slot.side, custom_id(design_sha256, slot.trial, slot.slot), body))
    return requests


@dataclass
class BatchImport:
    """What a batch import found: the ``rows`` to append and the results that never ran
    (``not_run``: the batch expired or was cancelled first)."""

    rows: list[ResponseRow] = field(default_factory=list)
    not_run: int = 0


def _batch_completion(design: DesignRecord, slot: Slot, result: BatchResult) -> Completion:
    seed = slot_seed(design["seed"], slot.trial, slot.slot) if result.fmt == "openai" else None
    completion = result_completion(result, slot.side, seed=seed)
    said = result.said or ServerError("failed")
    if result.completion is None and prompt_too_long(result.status, said):
        # One prompt too long for the model is this slot's failure, as in a live run.
        shown = f"HTTP {result.status}: " if result.status is not None else ""
        return replace(
            completion,
            kind="too_long",
            error=f"trial {slot.trial}, prompt {slot.prompt_id}: the prompt is too long for "
            f"the server ({shown}{said.message})",
        )
    return completion


def batch_rows(
    design: DesignRecord,
    design_sha256: str,
    state: SlotState,
    results: Iterable[BatchResult],
) -> BatchImport:
    """The ``responses.jsonl`` rows for batch results, built as a live answer's are
    (:func:`response_record`: the same normalization and failure rows; ``latency_ms`` null,
    nothing was timed, ``attempts`` 1).

    Refuses the whole import (``BadInput`` with the counts; nothing is to be written) when any
    result belongs to another run, names a slot this design does not have, or answers a slot
    already answered (on disk, or earlier in the same files): the caller has already set
    aside the results it skips (:func:`blindtest.generate_batch.slot_triage`).
    """
    expected = {(s.trial, s.slot): s for s in plan_slots(design)}
    requests = SlotRequests(design)
    found = BatchImport()
    foreign = unknown = answered = 0
    done: set[tuple[int, int]] = set()
    first_bad = ""
    for result in results:
        cid = parse_custom_id(result.custom_id)
        where = f"{result.source}:{result.line}"
        if cid is None or cid.run != design_sha256[:16]:
            foreign += 1
            first_bad = first_bad or f"{where} ({result.custom_id!r} is not this run's)"
            continue
        slot = expected.get((cid.trial, cid.number)) if cid.part == "s" else None
        if slot is None:
            unknown += 1
            first_bad = first_bad or f"{where} (no slot {result.custom_id!r} in this design)"
            continue
        key = (slot.trial, slot.slot)
        if state.answered(slot, "generate") is not None or key in done:
            answered += 1
            first_bad = first_bad or f"{where} (trial {slot.trial} slot {slot.slot} answered)"
            continue
        if result.not_run:
            found.not_run += 1
            continue
        row = batch_row(design, slot, result, requests)
        found.rows.append(row)
        if row["status"] == "ok":
            done.add(key)
    if foreign or unknown or answered:
        raise BadInput(
            f"refused {reportfmt.count(foreign + unknown + answered, 'batch result')} "
            f"({foreign} for another run, "
            f"{unknown} for slots this design does not have, {answered} for slots already "
            f"answered; first: {first_bad}); nothing written"
        )
    return found


def batch_row(
    design: DesignRecord, slot: Slot, result: BatchResult, requests: SlotRequests | None = None
) -> ResponseRow:
    """The row a batch ``result`` for ``slot`` makes (nothing timed: ``latency_ms`` null),
    recording the hash of the body exported for it (its custom_id names this design)."""
    completion = _batch_completion(design, slot, result)
    model = _side_model(design, slot)
    requests = requests or SlotRequests(design)
    row = response_record(design, Work(slot, "generate"), completion, model, requests)
    row["latency_ms"] = None
    return row


def _side_model(design: DesignRecord, slot: Slot) -> str:
    return str(design["models"][slot.side]["model"])


def import_batch_stage(
    design: DesignRecord,
    design_sha256: str,
    existing: Sequence[JsonObject],
    previous: Mapping[str, Any] | None,
    results: Iterable[BatchResult],
    given_prices: Mapping[str, tuple[float, float]],
    io: StageIO,
) -> tuple[BatchImport, list[TrialRecord] | None]:
    """bt-generate --batch-import's work: check every result (:func:`batch_rows`), append
    the rows, record the session in ``generation.json`` (no wall time: a batch is not timed
    here), and return what was found with the blinded view once every slot is answered
    (None while some are missing: a partial import is fine, a later one fills the rest)."""
    check_rows_match_design(design, existing)
    state = SlotState.from_rows(existing)
    found = batch_rows(design, design_sha256, state, results)
    if found.rows:
        with io.open_responses() as append:
            for row in found.rows:
                append(row)
                state.record(row)
    prices = recorded_prices(previous, design_sha256) | dict(given_prices)
    session = session_entry(found.rows, 0.0) if found.rows else None
    sessions, wall = ledger(previous, design_sha256, existing, session)
    rows = [*existing, *found.rows]
    io.write_generation(generation_record(design, design_sha256, rows, prices, wall, sessions))
    check_not_deterministic(design, state)
    if pending_work(design, state):
        return found, None
    notice = collision_notice(DrawCollisions.for_design(design, state))
    if notice:
        io.say(notice)
    return found, build_trials_view(design, state)
