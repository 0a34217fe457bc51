"""The LLM judge (spec 003): a model asked, through
:class:`blindtest.transport.client.ChatClient`, to
judge the blinded trials with a strict JSON verdict; one more ``Judge`` for the driver.

It owns asking: each verdict asked again up to three times with backoff when malformed
(the schemas and their parsing are :mod:`~blindtest.judging.llm.verdicts`; the messages
:mod:`~blindtest.judging.llm.messages`; the options and key checks
:mod:`~blindtest.judging.llm.options`; the passes' bookkeeping
:mod:`~blindtest.judging.llm.passes`), the structured-output fallback (``response_format``
until the endpoint refuses it by a 400, then plain text), the stop at the first failure that
would repeat for every comparison (a refused key, nothing listening), the position swap of a
preference comparison (both raw verdicts kept; the pass-1 record's pick is the comparison's
verdict after the swap and confidence rules), and what each record stores.

It works ahead: at its first turn it starts every remaining comparison (pair: one at a time,
each trial's conversation holds the judge's earlier answers) on an event loop of its own
thread; the driver still records in trial order. It sees only the blinded view; it never
reads the arrangement, and no key reaches a record (the client reads it per request).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

from blindtest import reportfmt
from blindtest.errors import BadInput, EndpointFailed, EndpointRejected, option
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
from blindtest.judging.llm.messages import (
    _mapping,
    comparison_messages,
    input_context,
    prompt_fields,
)
from blindtest.judging.llm.options import (
    LlmOptions,
)
from blindtest.judging.llm.passes import (
    ANSWERED_PASS,
    _answered_pass,
    _Asked,
    _Halted,
    _Ledger,
    _refuses_response_format,
    _settle,
    _shown,
    _side,
    _stored_pass,
)
from blindtest.judging.llm.verdicts import (
    VERDICT_RETRIES,
    response_format,
    validate_verdict,
)
from blindtest.model.picks import (
    SETTINGS_HASH_FIELD,
    JudgeRun,
    Pick,
    Trial,
    judge_nicknames,
    settings_sha256,
)
from blindtest.model.protocols import PROTOCOLS
from blindtest.transport.client import ChatClient, Completion
from blindtest.transport.retry import RetryPolicy
from blindtest.transport.wire import ChatMessage

__all__ = [
    "LlmJudge",
    "llm_kind",
]


# --------------------------------------------------------------------------- asking


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
        self._asking = PROTOCOLS[self.protocol].llm.asking
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
        self._fields = prompt_fields(setup.run) if self._asking == "passes" else {}
        # Trials whose pass 1 is stored without its pass 2 (killed between the two appends):
        # only pass 2 is written for them.
        mine = [p for p in setup.earlier.picks if p.judge == setup.judge_id]
        seconds = {p.trial for p in setup.earlier.later_passes if p.judge == setup.judge_id}
        self._half_done = {p.trial for p in mine if p.pass_number == 1} - seconds
        # Passes paid for in an earlier sitting that no finished comparison holds, by trial and
        # pass: used as they are, never asked again.
        self._kept = self._kept_passes(setup) if self._asking == "passes" else {}
        # Passes answered in this sitting whose comparison has not finished, by trial: what a
        # stop keeps in a failure row.
        self._got: dict[int, dict[int, _Asked]] = {}
        # A pair judge resumed: its earlier answers go back into the conversation.
        self._history: list[tuple[ChatMessage, str]] = [
            (prompts.pair_turn(p.trial, *_shown(setup.run, p.trial)), str(p.extra["raw_response"]))
            for p in sorted(setup.earlier.picks, key=lambda p: p.trial)
            if self._asking == "conversation"
            and p.judge == setup.judge_id
            and "raw_response" in p.extra
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
            alone = self._asking != "conversation"
            ahead = (turn.trial, *turn.ahead) if alone else (turn.trial,)
            start = []
            for trial in ahead:
                if trial.number not in self._futures:
                    self._futures[trial.number] = concurrent.futures.Future()
                    start.append((trial, self._futures[trial.number]))
            self._loop.call_soon_threadsafe(self._start, start)
            self._all_started = alone
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
        them = "it" if self.failed == 1 else "them"
        failed = f", {self.failed} failed (rerun the same command to ask {them} again)"
        tokens = (
            f"; {reportfmt.count_grouped(led.requests, 'request')} ("
            f"{reportfmt.count(led.retries, 'retry', 'retries')}), "
            + reportfmt.count_grouped(led.prompt_tokens + led.completion_tokens, "token")
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
        if self._asking != "conversation":
            # At most twice --concurrency comparisons prepare and ask at once (enough to keep
            # the client's slots full while some parse a verdict or back off): the first
            # request leaves as soon as its prompt is built, not after every comparison's.
            active = self._active
            assert active is not None
            async with active:
                if self._asking == "passes":
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
            "verdict": verdict.get(PROTOCOLS[self.protocol].llm.verdict),
            "key_differentiators": list(verdict.get("key_differentiators") or []),
            "identity_leakage": bool(verdict["identity_leakage_detected"]),
            "identity_leakage_details": verdict.get("identity_leakage_details"),
            "raw_response": asked.raw,
            "attempts": asked.attempts,
            "tokens": {"prompt": asked.prompt_tokens, "completion": asked.completion_tokens},
        }
        if self._asking == "passes":
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
            asked.error = (
                f"no valid verdict after {reportfmt.count(attempt + 1, 'answer')}: {problem}"
            )
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
    ``--judge-*`` options: :func:`blindtest.judging.stage.llm_options`)."""
    model = name.partition(":")[2].strip()
    if not model:
        raise BadInput(
            f"{option('kind', 'llm:MODEL')}: name the judge model, e.g. "
            f"{option('kind', 'llm:gpt-4o')}"
        )
    return llm_kind(LlmOptions(model=model))
