"""An LLM judge through a batch file (``bt-judge --judge llm:M``):
the requests a live judge would send, as ``(custom_id, body)`` pairs for
:mod:`blindtest.transport.batch`, and the results read back checked and replayed through the
live judge's own verdict parsing, validation, failure rows and resume logic.

Export. Every comparison still missing for this judge
(:func:`blindtest.model.picks.remaining_trials`: failed ones included, and both passes of a
trial killed between its two appends), each pass of the position swap a request of its own:
the second pass does not depend on the first, so both go in one file. The body is the exact
one a live call sends (:meth:`~blindtest.transport.endpoint.Endpoint.request_body` with
``response_format``). A pair judge is refused: each of its calls holds the judge's earlier
answers.

custom_id: ``bt-<16 hex of the design hash>-t<trial>-p<pass>-j<8 hex of the judge model>-h<8
hex of the body>`` (at most 64 characters of ``[a-zA-Z0-9_-]``): a result names its run, its
judge model, its trial and pass, and the very request it answers (a result for a prompt that
has changed since the export, another template or temperature, matches nothing).

Import. :func:`select` sorts the results with :func:`blindtest.transport.batch.triage`, as
bt-generate does: another run or judge model (foreign), no such comparison or a request this
judge would not send now (unknown: a body hash that does not match), or a pass answered twice in
the files with different results refuse the whole import with the counts. A pass already stored
with the same raw answer and tokens, or a failed comparison whose failure row these very results
made, is skipped with a count (an interrupted import run again), and so is a pass already judged
with another answer (the stored verdict stands). A result whose request never ran (batch expired
or cancelled) is left missing, and so is a trial whose passes are not all back.
:class:`BatchReplayJudge` is the live judge with each call answered from the files and no
verdict asked again (a batch cannot retry: a malformed verdict is a failure row, and the next
export asks it again)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import orjson

from blindtest.errors import BadInput, option
from blindtest.judging.driver import JudgeKind, JudgeSetup
from blindtest.judging.llm.judge import LlmJudge
from blindtest.judging.llm.messages import comparison_messages, prompt_fields
from blindtest.judging.llm.options import LlmOptions
from blindtest.judging.llm.verdicts import response_format
from blindtest.model.picks import JudgeRun, PicksFile, Trial
from blindtest.model.protocols import PROTOCOLS
from blindtest.reportfmt import count
from blindtest.transport.batch import (
    BatchResult,
    Triage,
    custom_id,
    parse_custom_id,
    result_completion,
    triage,
)
from blindtest.transport.client import Completion
from blindtest.transport.wire import ChatMessage

__all__ = [
    "BatchReplayJudge",
    "Selection",
    "check_batchable",
    "judge_requests",
    "replay_kind",
    "select",
]

PASS = "p"


def check_batchable(protocol: str) -> None:
    if PROTOCOLS[protocol].llm.asking == "conversation":
        raise BadInput(
            f"a {protocol} judge cannot be batched: each call holds the judge's earlier answers; "
            f"judge it live (drop the {option('batch')} option)"
        )


def _tag(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:8]


def _key(messages: Sequence[Mapping[str, Any]]) -> bytes:
    return orjson.dumps([dict(m) for m in messages])


def _passes(run: JudgeRun, options: LlmOptions) -> tuple[tuple[int, bool], ...]:
    if PROTOCOLS[run.view.protocol].llm.asking == "passes" and options.swap:
        return ((1, False), (2, True))
    return ((1, False),)


def judge_requests(
    run: JudgeRun, options: LlmOptions, trials: Iterable[Trial]
) -> list[tuple[int, str, dict[str, object]]]:
    """``(trial, custom_id, body)`` for every pass of every trial in ``trials``."""
    check_batchable(run.view.protocol)
    fields = prompt_fields(run) if PROTOCOLS[run.view.protocol].llm.asking == "passes" else {}
    endpoint = options.endpoint()
    shape = response_format(run.view.protocol)
    model = _tag(options.model.encode())
    requests = []
    for trial in trials:
        for number, swapped in _passes(run, options):
            messages = comparison_messages(
                run, options, trial, swapped, fields.get(trial.number, {})
            )
            body = endpoint.request_body(messages, response_format=shape)
            cid = custom_id(run.design_sha256, trial.number, number, PASS)
            cid += f"-j{model}-h{_tag(orjson.dumps(body, option=orjson.OPT_SORT_KEYS))}"
            requests.append((trial.number, cid, body))
    return requests


@dataclass
class Selection:
    """What a set of results holds for this judge: the answers by request (``answers``: the
    messages as JSON -> result) of the ``trials`` whose passes are all back, results that
    never ran, results of trials with a pass still missing (``partial``), what was skipped
    (``skipped``: :class:`~blindtest.transport.batch.Triage` without its fresh results) and the
    comparisons skipped because these results already made their failure rows
    (``failed_before``)."""

    answers: dict[bytes, BatchResult] = field(default_factory=dict)
    trials: set[int] = field(default_factory=set)
    not_run: int = 0
    partial: int = 0
    skipped: Triage = field(default_factory=Triage)
    failed_before: int = 0


def _fingerprint(result: BatchResult) -> Hashable:
    """What a result says, as a stored pass records it: the raw text and tokens, or the
    error of a failed request."""
    completion = completion_of(result)
    if completion.ok:
        usage = completion.usage
        tokens = (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)
        return ("ok", completion.text, tokens)
    return ("failed", completion.error or completion.kind)


def _stored_fingerprint(extra: Mapping[str, Any]) -> Hashable:
    tokens = extra.get("tokens") or {}
    return ("ok", extra.get("raw_response"), (tokens.get("prompt", 0), tokens.get("completion", 0)))


def _made_failure(result: BatchResult, row: Mapping[str, Any]) -> bool:
    """Whether ``result`` is what made the failure row ``row`` (a batch asks once)."""
    completion = completion_of(result)
    raw = row.get("raw_response") or ""
    if completion.ok:
        return bool(raw) and completion.text == raw
    return not raw and row.get("error") == completion.error


def select(
    run: JudgeRun,
    options: LlmOptions,
    remaining: Sequence[Trial],
    results: Iterable[BatchResult],
    *,
    earlier: PicksFile | None = None,
    judge_id: str = "",
) -> Selection:
    """Sort ``results`` (see the module docstring) against the picks this judge has in
    ``earlier``; ``BadInput`` with the counts refuses the whole import when any is foreign,
    unknown or answers a pass twice with different results."""
    results = list(results)
    check = _Sorter(run, options)
    named = sorted({t for t in map(check.trial_of, results) if t is not None})
    expected = {
        cid: (trial, body)
        for trial, cid, body in judge_requests(
            run, options, [run.view.trials[n - 1] for n in named]
        )
    }
    check.expected = expected
    open_trials = {t.number for t in remaining}
    stored = _stored(earlier, judge_id, open_trials)
    failures = _failures(earlier, judge_id, open_trials)
    failed_before: set[int] = set()
    for result in results:
        trial = check.trial_of(result)
        if trial in failures and any(_made_failure(result, row) for row in failures[trial]):
            failed_before.add(trial)
    again = {
        (trial, cid.number): _fingerprint(result)
        for result in results
        if (cid := parse_custom_id(result.custom_id)) is not None
        and (trial := cid.trial) in failed_before
    }

    def stored_of(key: Hashable) -> tuple[bool, Collection[Hashable]]:
        trial, number = cast(tuple[int, int], key)
        if trial in failed_before:  # these results made its failure row: imported already
            return True, {again.get((trial, number))}
        if trial in open_trials:
            return False, ()
        said = stored.get((trial, number))
        return True, {said} if said is not None else set()

    sorted_ = triage(
        results,
        place=check.place,
        content=lambda _, result: _fingerprint(result),
        stored=stored_of,
        refusal=_refusal,
    )
    selection = Selection(skipped=sorted_, failed_before=len(failed_before))
    got = {result.custom_id: result for result in sorted_.fresh}
    _whole_trials(selection, got, expected, len(check.numbers))
    sorted_.fresh = []
    return selection


def _refusal(counts: Mapping[str, int], first: str) -> str:
    return (
        f"refused {count(sum(counts.values()), 'batch result')} "
        f"({counts.get('foreign', 0)} for another "
        f"run or judge model, {counts.get('unknown', 0)} for comparisons this judge does not "
        f"have, {counts.get('twice', 0)} answering a comparison again with a different result; "
        f"first: {first}); nothing written"
    )


def _stored(
    earlier: PicksFile | None, judge_id: str, open_trials: set[int]
) -> dict[tuple[int, int], Hashable]:
    """What each stored pass of a judged trial says, by (trial, pass)."""
    if earlier is None:
        return {}
    return {
        (p.trial, p.pass_number or 1): _stored_fingerprint(p.extra)
        for p in (*earlier.picks, *earlier.later_passes)
        if p.judge == judge_id and p.trial not in open_trials
    }


def _failures(
    earlier: PicksFile | None, judge_id: str, open_trials: set[int]
) -> dict[int, list[Mapping[str, Any]]]:
    """This judge's failure rows of the trials still open, by trial."""
    rows: dict[int, list[Mapping[str, Any]]] = {}
    for row in earlier.failures if earlier is not None else ():
        if row.get("judge") == judge_id and row.get("trial") in open_trials:
            rows.setdefault(int(row["trial"]), []).append(row)
    return rows


def _whole_trials(
    selection: Selection,
    got: Mapping[str, BatchResult],
    expected: Mapping[str, tuple[int, dict[str, object]]],
    passes: int,
) -> None:
    """Keep the answers of the trials whose passes all ran; count the rest."""
    by_trial: dict[int, list[tuple[str, BatchResult]]] = {}
    for cid_text, result in got.items():
        by_trial.setdefault(expected[cid_text][0], []).append((cid_text, result))
    for trial, answered in by_trial.items():
        if any(r.not_run for _, r in answered):
            selection.not_run += sum(r.not_run for _, r in answered)
        elif len(answered) < passes:
            selection.partial += len(answered)
        else:
            selection.trials.add(trial)
            for cid_text, result in answered:
                messages = expected[cid_text][1]["messages"]
                assert isinstance(messages, list)
                selection.answers[_key(messages)] = result


class _Sorter:
    """Places one result: ``("ok", (trial, pass), label)``, or "foreign" / "unknown" with the
    refusal's words."""

    def __init__(self, run: JudgeRun, options: LlmOptions) -> None:
        self.run16 = run.design_sha256[:16]
        self.total = run.view.total
        self.numbers = {n for n, _ in _passes(run, options)}
        self.model = _tag(options.model.encode())
        self.expected: Mapping[str, tuple[int, dict[str, object]]] = {}

    def trial_of(self, result: BatchResult) -> int | None:
        """The trial a result names, when it is this run's and judge's and in range."""
        cid = parse_custom_id(result.custom_id)
        if cid is None or cid.run != self.run16 or cid.judge != self.model:
            return None
        if cid.part != PASS or not 1 <= cid.trial <= self.total:
            return None
        return cid.trial

    def place(self, result: BatchResult) -> tuple[str, Hashable, str]:
        cid = parse_custom_id(result.custom_id)
        where = f"{result.source}:{result.line} ({result.custom_id!r}"
        if cid is None or cid.run != self.run16:
            return "foreign", None, f"{where} is another run's)"
        if cid.judge is not None and cid.judge != self.model:
            return "foreign", None, f"{where} is another judge model's)"
        if cid.part != PASS or cid.judge is None or cid.number not in self.numbers:
            return "unknown", None, f"{where} is no comparison of this judge)"
        if not 1 <= cid.trial <= self.total:
            return "unknown", None, f"{where}: this run has no trial {cid.trial})"
        if result.custom_id not in self.expected:
            return (
                "unknown",
                None,
                f"{where} answers another request: the prompt, template or judge options "
                "changed since the export)",
            )
        return "ok", (cid.trial, cid.number), f"trial {cid.trial} pass {cid.number}"


# --------------------------------------------------------------------------- replay


def completion_of(result: BatchResult) -> Completion:
    """A batch result as the :class:`Completion` a live judge call returns."""
    return result_completion(result, "judge")


class BatchReplayJudge(LlmJudge):
    """The live LLM judge, each call answered by its batch result (never asked again)."""

    verdict_retries = 0

    def __init__(
        self,
        setup: JudgeSetup,
        options: LlmOptions,
        kind: JudgeKind,
        answers: Mapping[bytes, BatchResult],
    ) -> None:
        super().__init__(setup, options, kind)
        self._answers = answers

    async def _complete(self, messages: Sequence[ChatMessage]) -> Completion:
        return completion_of(self._answers[_key(messages)])


def replay_kind(options: LlmOptions, answers: Mapping[bytes, BatchResult]) -> JudgeKind:
    """The ``llm:MODEL`` judge kind whose judge answers from ``answers``."""

    def check(run: JudgeRun) -> None:
        check_batchable(run.view.protocol)

    def make(setup: JudgeSetup) -> BatchReplayJudge:
        return BatchReplayJudge(setup, options, kind, answers)

    kind = JudgeKind(
        f"llm:{options.model}",
        "llm",
        make,
        check,
        default_id=options.model,
        settings=options.settings,
    )
    return kind
