"""The ``Recorder`` a judge's picks go through, and the hidden sequential stopping rule it
applies: each pick checked against the picks contract, stamped with the judge's kind, the design
hash and (a machine judge) its settings, and appended; ``record`` answers only "go on" or
"stop", never a correctness flag or an e-value. Side effects come in as an ``append``
callback: no file opened here, nothing printed, no click.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, overload

from blindtest.errors import BadInput
from blindtest.model.picks import (
    SETTINGS_FIELD,
    SETTINGS_HASH_FIELD,
    JsonObject,
    JudgeRun,
    JudgeView,
    Pick,
    PicksChecker,
    Trial,
    clean_text,
    settings_sha256,
    skip_record,
)
from blindtest.model.scoring import triangle_correct
from blindtest.rundir.artifacts import schema_tag

__all__ = ["Append", "LogE", "Recorder", "StoppingRule"]

Append = Callable[[JsonObject], None]

# --------------------------------------------------------------------------- sequential stop

LogE = Callable[[int, int], float]


def _default_log_e() -> LogE:
    from blindtest.stats.sequential import log_e_value

    return log_e_value


class StoppingRule:
    """The pre-registered sequential stop: after each triangle pick, stop once E >= 1/alpha.

    ``log_e(correct, n)`` is the e-process of ``blindtest.stats.sequential``; it is a
    parameter so tests can drive the rule with a known sequence.
    """

    def __init__(self, alpha: float, log_e: LogE | None = None) -> None:
        self.threshold = math.log(1.0 / alpha)
        self._log_e = log_e if log_e is not None else _default_log_e()
        self.correct = 0
        self.n = 0
        self.crossed = False

    def observe(self, correct: bool) -> bool:
        """Add one outcome; True once the e-value has reached 1/alpha (it never un-crosses)."""
        self.n += 1
        self.correct += int(correct)
        if not self.crossed:
            self.crossed = self._log_e(self.correct, self.n) >= self.threshold
        return self.crossed

    def revise(self, was: bool, now: bool) -> bool:
        """Replace an outcome (the judge changed an earlier pick: its undo, or a change from
        the history): the rule then stands on the judge's last word on every trial. The
        e-process reads the counts only, so which trial changed does not matter. Never called
        once crossed (the session is over)."""
        self.correct += int(now) - int(was)
        if not self.crossed:
            self.crossed = self._log_e(self.correct, self.n) >= self.threshold
        return self.crossed


class Recorder:
    """Checks and appends one judge's picks, and applies the hidden stopping rule.

    ``record`` returns True when the session is over (every trial judged, or a sequential
    design's e-value reached 1/alpha) and False otherwise: the only thing a session learns.
    """

    def __init__(
        self,
        run: JudgeRun,
        judge: str,
        append: Append,
        earlier: Sequence[Pick] = (),
        log_e: LogE | None = None,
        *,
        kind: str = "human",
        settings: Mapping[str, Any] | None = None,
        share: Collection[int] | None = None,
    ) -> None:
        self._run = run  # private: it holds the answer key, which a session must not reach
        self.judge = judge
        self.kind = kind
        #: A machine judge's settings, stamped on every record (with their hash).
        self._stamp: JsonObject = (
            {SETTINGS_FIELD: dict(settings), SETTINGS_HASH_FIELD: settings_sha256(settings)}
            if settings is not None
            else {}
        )
        self._append = append
        #: The trials this judge is asked (a person on a people's sample); None: all.
        self._share = frozenset(share) if share is not None else None
        self._checker = PicksChecker(run.view)
        self._judged: set[int] = set()
        self._last: int | None = None
        #: The trials this judge has a pass-1 word on (how long its history is).
        self._worded: set[int] = set()
        #: Every pass-1 word in the order given (a change after its pick): what a History replays.
        self._given: list[Pick] = []
        self._outcomes: dict[int, bool] = {}  # trial -> the scored outcome the rule holds
        self._rule = StoppingRule(run.alpha, log_e) if run.view.sequential else None
        for pick in earlier:
            self._checker.accept(pick)
            if pick.judge == judge:
                self._note(pick)
        self._last = None  # only a pick made through this recorder can be taken back

    def _note(self, pick: Pick) -> None:
        self._judged.add(pick.trial)
        self._last = pick.trial
        if (pick.pass_number or 1) == 1:
            word = replace(pick, correction=False)
            self._worded.add(pick.trial)
            self._given.append(word)
        if self._rule is None or (pick.pass_number or 1) > 1:
            return  # the rule stands on pass 1, the trial as shown
        correct = triangle_correct(self._run.design, pick.trial, pick.pick)
        was = self._outcomes.get(pick.trial)
        if pick.correction and was is not None:
            self._rule.revise(was, correct)
        else:
            self._rule.observe(correct)
        self._outcomes[pick.trial] = correct

    @property
    def words(self) -> History:
        """This judge's last word on each trial it has judged, in the order the trials were
        first judged (earlier sittings first): its history, to show and to change. Never a
        correctness flag. As it stands now, however many words follow."""
        return History(self._given, len(self._worded))

    def knows(self, pick_id: str) -> bool:
        """Whether this judge already has a record with ``pick_id`` (a pick sent twice)."""
        return self._checker.knows(self.judge, pick_id)

    @property
    def done(self) -> bool:
        crossed = self._rule is not None and self._rule.crossed
        return crossed or self.judged >= self.total

    @property
    def stopped_early(self) -> bool:
        """True when a sequential design stopped before its trial limit."""
        crossed = self._rule is not None and self._rule.crossed
        return crossed and self.judged < self.total

    @property
    def judged(self) -> int:
        if self._share is not None:
            return len(self._judged & self._share)
        return len(self._judged)

    @property
    def view(self) -> JudgeView:
        return self._run.view

    @property
    def total(self) -> int:
        """The trials this judge is asked: its share, else every trial."""
        return len(self._share) if self._share is not None else self._run.view.total

    def trial(self, number: int) -> Trial:
        return self._run.view.trials[number - 1]

    def can_take_back(self, trial: int) -> bool:
        """Whether an undo may take back the pick for ``trial``: only the last pick made
        through this recorder, and only while the session goes on."""
        return trial == self._last and not self.done

    def can_correct(self, trial: int) -> bool:
        """Whether this judge's word on ``trial`` may be changed: any trial it has judged (in
        this sitting or before), while the session goes on."""
        return trial in self._judged and not self.done

    def record_skip(self, trial: int, at: str | None) -> None:
        """Append a skip record for ``trial`` (put off, not judged: it comes back later)."""
        if trial in self._judged:
            raise ValueError(f"trial {trial} is judged already; a skip puts off an unjudged one")
        row = skip_record(trial, self.judge, at)
        row.update({"judge_kind": self.kind, "design_sha256": self._run.design_sha256})
        self._append(row)

    def record_failure(self, trial: int, details: Mapping[str, Any]) -> None:
        """Append a failure row for ``trial`` (``"failed": true``, ``"pick": "failed"``): the
        judge got no answer; readers skip the row and the trial stays to be judged."""
        row: JsonObject = {
            "schema": schema_tag("picks"),
            "trial": trial,
            "judge": self.judge,
            "pick": "failed",
            "failed": True,
            "judge_kind": self.kind,
            "design_sha256": self._run.design_sha256,
            **self._stamp,
        }
        row.update({key: value for key, value in details.items() if key not in row})
        self._append(row)

    def record(self, pick: Pick) -> bool:
        """Stamp the pick with this judge's kind, the design hash and (a machine judge) its
        settings, check it, append it.

        A pick with ``correction=True`` replaces the judge's earlier pick for its trial
        (``can_correct``); the hidden stopping rule then uses the judge's last word. A pick
        whose ``pick_id`` this judge has recorded already is not written again.
        """
        if pick.judge != self.judge:
            raise ValueError(f"this recorder writes picks by {self.judge!r}, not {pick.judge!r}")
        if pick.correction and not self.can_correct(pick.trial):
            raise BadInput(f"the pick for trial {pick.trial} can no longer be changed")
        if pick.pick_id is not None and self.knows(pick.pick_id):
            return self.done  # sent twice (its reply lost): recorded once
        pick = replace(
            pick,
            judge_kind=pick.judge_kind or self.kind,
            design_sha256=self._run.design_sha256,
            reason=clean_text(pick.reason) or None if pick.reason is not None else None,
        )
        if self._stamp:
            pick = replace(pick, extra={**pick.extra, **self._stamp})
        problem = self._checker.check(pick)
        if problem is not None:
            raise BadInput(problem)
        self._append(dict(pick.to_record()))
        self._checker.accept(pick)
        self._note(pick)
        return self.done


class History(Sequence[Pick]):
    """A judge's history as it stood when taken: its last word on each trial judged, in the
    order the trials were first judged. Taking one and asking its length cost nothing; its
    words are put together only when read (the history screen, a change). A tuple of every
    word built on every turn made a sitting quadratic: 45,000 bot-judged comparisons spent
    234 s of 603 s there. ``given`` only grows (every pass-1 word in order, a change after the
    pick it changes), so the first ``len(given)`` words at taking time are this history
    whatever is given later."""

    __slots__ = ("_given", "_size", "_upto")

    def __init__(self, given: list[Pick], size: int) -> None:
        self._given = given
        self._upto = len(given)
        self._size = size

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: int) -> Pick: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Pick]: ...

    def __getitem__(self, index: int | slice) -> Pick | Sequence[Pick]:
        return self._words()[index]

    def __iter__(self) -> Iterator[Pick]:
        return iter(self._words())

    def _words(self) -> tuple[Pick, ...]:
        last: dict[int, Pick] = {}
        for word in self._given[: self._upto]:
            last[word.trial] = word
        return tuple(last.values())
