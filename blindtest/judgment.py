"""The judging stage as a library: where a judge resumes, how a pick scores against the
arrangement, the hidden sequential stopping rule and the ``Recorder`` that applies it, and what
happens to an existing picks file (the driver that asks a judge is
``blindtest.judging.driver``).

The records a judge sees and writes, and the picks contract, are shared
(``blindtest.judging.picks``); the bots are ``blindtest.judging.bots``. Both are re-exported
here for the code that names them through this module.

It must never hand the arrangement, a correctness flag or an e-value to anything that displays
things: a session gets a ``JudgeView`` (the blinded trials and the question) and a ``Recorder``
whose ``record`` answers only "go on" or "stop". It opens no file itself (``artifacts`` does),
prints nothing and imports no click; side effects come in as an ``append`` callback.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from blindtest import scoring
from blindtest.artifact_types import DesignRecord
from blindtest.artifacts import schema_tag
from blindtest.errors import BadInput
from blindtest.judging.bots import BOT_NICKNAMES, bot_pick, check_bot
from blindtest.judging.kinds import BOT_KINDS, PICK_KINDS
from blindtest.judging.picks import (
    SETTING_OPTIONS,
    SETTINGS_FIELD,
    SETTINGS_HASH_FIELD,
    JsonObject,
    JudgeRun,
    JudgeView,
    Pick,
    PicksChecker,
    PicksFile,
    Trial,
    changed_settings,
    check_picks,
    clean_text,
    has_control,
    judge_id_problem,
    judge_nicknames,
    last_words,
    load_judge_run,
    load_picks,
    mixing_problem,
    pick_problem,
    read_picks,
    remaining_trials,
    settings_changes,
    settings_of,
    settings_sha256,
    trial_problem,
    trials_from_records,
    view_of,
)

__all__ = [
    "BOT_KINDS",
    "BOT_NICKNAMES",
    "PICK_KINDS",
    "Append",
    "JsonObject",
    "JudgeRun",
    "JudgeView",
    "LogE",
    "Pick",
    "PicksFile",
    "Recorder",
    "StoppingRule",
    "Trial",
    "arrangement_entry",
    "bot_pick",
    "check_bot",
    "check_default_id",
    "check_picks",
    "check_settings",
    "clean_text",
    "has_control",
    "judge_id_problem",
    "judge_nicknames",
    "last_words",
    "load_judge_run",
    "load_picks",
    "mixing_problem",
    "option1_side",
    "pick_problem",
    "plan_output",
    "preferred_side",
    "read_picks",
    "remaining_trials",
    "trial_problem",
    "trials_from_records",
    "triangle_correct",
    "view_of",
]

Append = Callable[[JsonObject], None]

# --------------------------------------------------------------------------- scoring

arrangement_entry = scoring.arrangement_entry
option1_side = scoring.option1_side


def triangle_correct(design: DesignRecord, pick: Pick) -> bool:
    """Whether a triangle pick found the odd response."""
    return scoring.triangle_correct(design, pick.trial, pick.pick)


def preferred_side(design: DesignRecord, pick: Pick) -> str | None:
    """Preference: the side ("A"/"B") the judge preferred, or None for a tie."""
    return scoring.preferred_side(design, pick.trial, pick.pick)


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
        """Replace the last outcome (the judge's correction of the last pick): the rule then
        stands on the judge's last word. Never called once crossed (the session is over)."""
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
        self._checker = PicksChecker(run.view)
        self._judged: set[int] = set()
        self._last: int | None = None
        self._outcome: bool | None = None
        self._rule = StoppingRule(run.alpha, log_e) if run.view.sequential else None
        for pick in earlier:
            self._checker.accept(pick)
            if pick.judge == judge:
                self._note(pick)
        self._last = None  # only a pick made through this recorder can be taken back

    def _note(self, pick: Pick) -> None:
        self._judged.add(pick.trial)
        self._last = pick.trial
        if self._rule is None or (pick.pass_number or 1) > 1:
            return  # the rule stands on pass 1, the trial as shown
        correct = triangle_correct(self._run.design, pick)
        if pick.correction and self._outcome is not None:
            self._rule.revise(self._outcome, correct)
        else:
            self._rule.observe(correct)
        self._outcome = correct

    @property
    def done(self) -> bool:
        crossed = self._rule is not None and self._rule.crossed
        return crossed or len(self._judged) >= self._run.view.total

    @property
    def stopped_early(self) -> bool:
        """True when a sequential design stopped before its trial limit."""
        crossed = self._rule is not None and self._rule.crossed
        return crossed and len(self._judged) < self._run.view.total

    @property
    def judged(self) -> int:
        return len(self._judged)

    @property
    def view(self) -> JudgeView:
        return self._run.view

    @property
    def total(self) -> int:
        return self._run.view.total

    def trial(self, number: int) -> Trial:
        return self._run.view.trials[number - 1]

    def can_correct(self, trial: int) -> bool:
        """Whether ``trial`` may be judged again: only the last pick made through this
        recorder, and only while the session goes on."""
        return trial == self._last and not self.done

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

        A pick with ``correction=True`` replaces the last pick (``can_correct``); the hidden
        stopping rule then uses the judge's last word.
        """
        if pick.judge != self.judge:
            raise ValueError(f"this recorder writes picks by {self.judge!r}, not {pick.judge!r}")
        if pick.correction and not self.can_correct(pick.trial):
            raise BadInput(f"the pick for trial {pick.trial} can no longer be taken back")
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


# --------------------------------------------------------------------------- the output file


def plan_output(
    existing: PicksFile, judge: str, *, bot: bool, force: bool, kind: str | None = None
) -> bool:
    """Decide what happens to an existing picks file before anything is written.

    Returns True when the file must be restarted empty (``--force``), False to append to it
    (a person resuming, or a new file). A person's picks never join a file that holds a bot's,
    nor a bot's a person's. A bot refuses an existing file without ``--force``,
    so its picks are never mixed into an earlier run of itself; ``--force`` refuses a file
    that holds another judge's picks, which it would delete.
    """
    path = existing.path
    pool = PICK_KINDS[kind].pool if kind in PICK_KINDS else None
    strangers = [
        p.judge for p in existing.picks if pool is not None and (pool == "llm") != (p.kind == "llm")
    ]
    if strangers:  # an LLM judge's picks never share a file with a person's or a bot's
        raise BadInput(
            f"{path} holds picks by {', '.join(dict.fromkeys(strangers))}, another kind of "
            f"judge; an LLM judge's picks never share a file with a person's or a bot's: use "
            f"--out FILE for judge {judge!r}"
        )
    others = [p.judge for p in existing.picks if (p.kind == "bot") != bot]
    if others:  # bots are never pooled with people, not even in one file
        held = "a person's" if bot else "a bot's"
        raise BadInput(
            f"{path} holds {held} picks ({', '.join(dict.fromkeys(others))}); "
            f"{'a bot' if bot else 'a person'}'s picks never go into the same file: use "
            f"--out FILE for judge {judge!r}"
        )
    if not force:
        if bot and path.exists():
            raise BadInput(
                f"{path} already exists; use --force to replace it, or --out FILE to write "
                "this judge's picks to a file of its own"
            )
        return False
    others = [name for name in existing.judges if name != judge]
    if others:
        listed = ", ".join(repr(name) for name in others[:3])
        raise BadInput(
            f"{path} also holds picks by {listed}; --force would delete them: use --out FILE "
            f"for judge {judge!r}"
        )
    return path.exists()


def check_settings(
    existing: PicksFile, judge: str, settings: Mapping[str, Any] | None, option: str = "--out"
) -> None:
    """Refuse to resume ``judge`` into ``existing`` with other settings than its picks there
    were made with (``BadInput`` naming each setting that differs, old -> new). Picks that
    record no settings (a file from before they were recorded) are not compared; a judge
    without settings (a person) is never refused here."""
    if settings is None:
        return
    earlier = [
        found
        for pick in (*existing.picks, *existing.later_passes)
        if pick.judge == judge and (found := settings_of(pick)) is not None
    ]
    if not earlier:
        return
    changes = settings_changes(earlier[-1], settings)
    if changes:
        flags = [SETTING_OPTIONS.get(n, "") for n in changed_settings(earlier[-1], settings)]
        given = ", ".join(dict.fromkeys(f for f in flags if f))
        hint = f" ({given})" if given else ""
        raise BadInput(
            f"{existing.path} holds picks by judge {judge!r} made with other settings "
            f"({', '.join(changes)}); one judge's picks are made with one set of settings: "
            f"resume with the earlier settings{hint}, or write these picks to a new file "
            f"with {option} FILE"
        )


def check_default_id(existing: PicksFile, judge: str, default_of: str) -> None:
    """Refuse to start the judge ``judge`` (a default id: no --judge-id was given) in a file
    that holds picks by other judges and none by ``judge``: the user may mean to continue one
    of them (a person on another account, an LLM judge resumed under another model) and would
    otherwise start a second judge in the file unawares. ``default_of`` says where the id came
    from ("your user name")."""
    names = [
        *dict.fromkeys(p.judge for p in (*existing.picks, *existing.later_passes)),
    ]
    if not names or judge in names:
        return
    listed = ", ".join(repr(name) for name in names[:5]) + (", ..." if len(names) > 5 else "")
    raise BadInput(
        f"{existing.path} holds picks by {listed}, none by {judge!r} ({default_of}, as no "
        f"--judge-id was given): pass --judge-id with one of those names to continue that "
        f"judge, or --judge-id {shlex.quote(judge)} to add a judge to this file, or --out FILE "
        "for a file of its own"
    )
