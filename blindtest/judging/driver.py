"""Who judges, behind one interface: the ``Judge`` protocol, what a kind of judge is
(``JudgeKind``, made by the module the registry :mod:`blindtest.model.judge_kinds` names for it:
:func:`judge_kind`), and the one driver that records any judge's picks in trial order.

The driver owns what is the same for every judge: the trials that remain (in the order given:
a panel reviewer's own), taking back the last pick, changing any earlier one (each a
correction, appended), putting a trial off (a skip: it comes back after the others), the hidden
sequential stopping rule and writing through the ``Recorder``. A judge only answers one trial
at a time with one or more ``Pick`` records (a judge whose kind allows several records per
trial, such as an LLM judge that answers a comparison twice with the positions swapped,
returns them together, each with its ``pass_number``), or asks to take back its last pick, or
changes an earlier one (``Revise``), or skips the trial, or stops. A judge that works
asynchronously (requests to a model, a web page) may start on ``Turn.ahead`` at its first
turn; what it answers is still recorded in trial order and the driver stops asking once the
design's rule says stop.

A judge never sees the arrangement, a correctness flag or an e-value: a ``Turn`` holds the
blinded trial and counts, nothing else. Library code: no click, no file opened here.
"""

from __future__ import annotations

import importlib
import itertools
from collections import deque
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol, overload

from blindtest.judging.recorder import Recorder
from blindtest.model.judge_kinds import PICK_KINDS, kind_of
from blindtest.model.picks import JudgeRun, Pick, PicksFile, Trial
from blindtest.model.picks import JudgingResult as JudgingResult  # how a sitting ended

# --------------------------------------------------------------------------- what passes


@dataclass(frozen=True, slots=True)
class Turn:
    """What the driver asks a judge: one trial, and where the judge stands.

    ``ahead`` are the trials after this one, in order, for a judge that works ahead; they
    may never be asked for (the sequential rule can stop first). It is a view of the driver's
    queue, good for this turn only (copying the queue on every turn made a sitting quadratic:
    30,000 trials took 4.2 s instead of about 2). ``correcting`` is the
    judge's earlier pick for this trial when the judge took it back; ``undoable`` is the
    pick a ``TakeBack`` would take back now (None when there is none). ``words`` is the
    judge's history: its last word on each trial judged so far (earlier sittings included),
    in the order first judged, for a judge that shows it and lets it be changed
    (``Revise``); ``left`` is how many trials are still to judge (this one included);
    ``skipped`` says this trial was skipped earlier in the sitting.
    """

    trial: Trial
    ahead: Sequence[Trial]
    judged: int
    judged_now: int
    first: bool
    correcting: Pick | None = None
    undoable: Pick | None = None
    words: Sequence[Pick] = ()
    left: int = 0
    skipped: bool = False


@dataclass(frozen=True, slots=True)
class TakeBack:
    """The judge takes back its last pick (``Turn.undoable``): that trial is asked again."""


@dataclass(frozen=True, slots=True)
class Revise:
    """The judge changes its word on a trial it judged before (from its history): ``picks``
    are appended as a correction and the trial asked now is asked again."""

    picks: tuple[Pick, ...]


@dataclass(frozen=True, slots=True)
class Skip:
    """The judge puts this trial off: a skip record is appended and the trial comes back after
    the others. On a trial shown again to be changed, the earlier word stands instead."""

    at: str | None = None


@dataclass(frozen=True, slots=True)
class Stop:
    """The judge stops for now; what was recorded stays."""


@dataclass(frozen=True, slots=True)
class Failed:
    """The judge could not answer this trial (a model's verdicts stayed malformed, its endpoint
    failed after retries): ``record`` is written as a failure row, the trial stays unjudged
    and a rerun asks it again."""

    record: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Halt:
    """The judge cannot go on (its endpoint refused the key, nothing listens at its URL, or
    Ctrl-C): no pick is written for this trial, only ``record`` when there is one, a failure
    row keeping what the trial already got (one answered pass of an LLM judge's position swap,
    which a rerun reuses rather than asking again). The driver still asks for the trials after
    it, so that answers already received are recorded (the judge answers the rest with
    ``Halt`` at once), then ends the sitting with ``error``."""

    error: BaseException
    record: Mapping[str, Any] | None = None


#: A judge's answer to a turn: its records for the trial, or take back, or change an earlier
#: trial, or skip, or stop, or failed, or halt.
Answer = tuple[Pick, ...] | TakeBack | Revise | Skip | Stop | Failed | Halt


class Judge(Protocol):
    """A judge the driver can ask: a person in a terminal, a bot, a model, a web page."""

    @property
    def kind(self) -> JudgeKind: ...

    def sitting(self, progress: Callable[[], JudgingResult]) -> AbstractContextManager[None]:
        """Held while the judge is asked: the judge's resources (a terminal's resize handler,
        a server). ``progress`` says what is saved so far, for a message on Ctrl-C."""
        ...

    def judge(self, turn: Turn) -> Answer:
        """Answer one trial. Picks carry this judge's id; the driver stamps the rest."""
        ...

    def end(self, result: JudgingResult) -> None:
        """Called inside ``sitting`` once the driver has stopped asking."""
        ...

    def closing(self, result: JudgingResult, out: Path, analyze_command: str) -> str:
        """The last line printed for this sitting, written into ``out`` (never a score)."""
        ...


# --------------------------------------------------------------------------- the driver


class _Ahead(Sequence[Trial]):
    """The trials after the first in the driver's queue, without copying them."""

    def __init__(self, queue: deque[Trial]) -> None:
        self._queue = queue

    def __len__(self) -> int:
        return max(0, len(self._queue) - 1)

    def __iter__(self) -> Iterator[Trial]:
        return itertools.islice(self._queue, 1, None)

    @overload
    def __getitem__(self, index: int) -> Trial: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Trial]: ...

    def __getitem__(self, index: int | slice) -> Trial | Sequence[Trial]:
        if isinstance(index, slice):
            return tuple(self)[index]
        if not -len(self) <= index < len(self):
            raise IndexError("trial ahead out of range")
        return self._queue[index % len(self) + 1]


@dataclass
class _Progress:
    recorder: Recorder
    total: int
    remaining: deque[Trial]
    judged_now: int = 0
    last: Pick | None = None  # the last pick made in this sitting: what TakeBack takes back
    correcting: Pick | None = None
    asked: int = 0
    skipped: set[int] = field(default_factory=set)
    #: Each trial's place in the order given: a rerun asks the trials left in that order, a
    #: skipped one in its own place again.
    places: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.places = {t.number: i for i, t in enumerate(self.remaining)}

    def result(self, status: str) -> JudgingResult:
        kept = self.correcting.trial if self.correcting is not None else None
        waiting = sorted(
            (t.number for t in self.remaining if t.number != kept),
            key=lambda n: self.places.get(n, n),
        )
        return JudgingResult(
            status=status,
            judged=self.recorder.judged,
            total=self.total,
            judged_now=self.judged_now,
            next_trial=waiting[0] if waiting else None,
            kept_trial=kept,
        )

    def finished(self) -> JudgingResult:
        return self.result("stopped" if self.recorder.stopped_early else "complete")

    def turn(self) -> Turn:
        last = self.last
        undoable = last if last is not None and self.recorder.can_take_back(last.trial) else None
        trial = self.remaining[0]
        return Turn(
            trial=trial,
            ahead=_Ahead(self.remaining),
            judged=self.recorder.judged,
            judged_now=self.judged_now,
            first=self.asked == 0,
            correcting=self.correcting,
            undoable=undoable,
            words=self.recorder.words,
            left=self.total - self.recorder.judged,
            skipped=trial.number in self.skipped,
        )


def drive(judge: Judge, recorder: Recorder, remaining: Sequence[Trial]) -> JudgingResult:
    """Ask ``judge`` for the ``remaining`` trials in order and record every answer.

    Returns how the sitting ended; a judge's ``sitting`` may turn Ctrl-C or the end of its
    input into an error, after every completed pick has been saved. A judge that halts
    (:class:`Halt`) ends it with its error, once the answers it already has are recorded.
    """
    state = _Progress(recorder, recorder.total, deque(remaining))
    halted: Halt | None = None
    with judge.sitting(lambda: state.result("quit")):
        if recorder.done:
            return state.finished()
        passes = PICK_KINDS[judge.kind.records_as].passes
        while state.remaining:
            turn = state.turn()
            state.asked += 1
            answer = judge.judge(turn)
            if isinstance(answer, Stop):
                return state.result("quit")
            if isinstance(answer, Halt):
                halted = halted or answer
            if _apply(state, turn, answer, passes):
                break
        if halted is not None:
            raise halted.error
        result = state.finished()
        judge.end(result)
        return result


def _apply(state: _Progress, turn: Turn, answer: Answer, passes: int) -> bool:
    """Carry out one answer (not ``Stop``); True once the recorder says the sitting is over."""
    if isinstance(answer, (Halt, Failed)):
        if answer.record is not None:
            state.recorder.record_failure(turn.trial.number, answer.record)
        state.remaining.popleft()
        return False
    if isinstance(answer, TakeBack):
        _take_back(state, turn)
        return False
    if isinstance(answer, Skip):
        _skip(state, turn, answer)
        return False
    if isinstance(answer, Revise):
        return _revise(state, turn, answer)
    if isinstance(answer, Stop):  # the caller ends the sitting on Stop before this
        raise ValueError("Stop is not carried out here")
    return _record(state, turn, answer, passes)


def _take_back(state: _Progress, turn: Turn) -> None:
    """The judge takes back its last pick: that trial is asked again, as a correction."""
    if turn.undoable is None:
        raise ValueError("TakeBack with nothing to take back (Turn.undoable)")
    state.correcting, state.last = turn.undoable, None
    state.remaining.appendleft(state.recorder.trial(turn.undoable.trial))


def _skip(state: _Progress, turn: Turn, skip: Skip) -> None:
    """The judge puts the trial off: recorded, and asked again after the others. A trial shown
    again to be changed is not put off: the earlier word stands."""
    state.remaining.popleft()
    if state.correcting is not None:
        state.correcting = None
        return
    state.recorder.record_skip(turn.trial.number, skip.at)
    state.skipped.add(turn.trial.number)
    state.remaining.append(turn.trial)


def _revise(state: _Progress, turn: Turn, revise: Revise) -> bool:
    """The judge changes its word on an earlier trial: appended as a correction; the trial
    asked now is asked again. True once the recorder says the sitting is over."""
    trials = {p.trial for p in revise.picks}
    if len(trials) != 1 or not revise.picks:
        raise ValueError("a change names one trial, with its own records")
    (number,) = trials
    if state.correcting is not None and number == turn.trial.number:
        return _record(state, turn, revise.picks, len(revise.picks))  # the trial shown again
    if not state.recorder.can_correct(number):
        raise ValueError(f"trial {number} has no pick by this judge to change")
    over = False
    for pick in revise.picks:
        over = state.recorder.record(replace(pick, correction=True))
    if state.last is not None and state.last.trial == number:
        state.last = None  # changed since: an undo no longer names it
    return over


def _record(state: _Progress, turn: Turn, picks: Sequence[Pick], passes: int) -> bool:
    """Append one trial's records; True once the recorder says the sitting is over."""
    if not picks or any(p.trial != turn.trial.number for p in picks):
        raise ValueError(f"a judge answers trial {turn.trial.number} with its own records")
    if len(picks) > passes:
        raise ValueError(f"this kind of judge writes at most {passes} record(s) per trial")
    correction = state.correcting is not None
    state.correcting = None
    state.remaining.popleft()
    if not correction:
        state.judged_now += 1
    state.last = picks[0]
    over = False
    for pick in picks:
        over = state.recorder.record(replace(pick, correction=correction))
    return over


# --------------------------------------------------------------------------- the kinds


@dataclass(frozen=True, slots=True)
class JudgeSetup:
    """What a judge is made from: the run, its id, the picks it already has in its file,
    and the command that resumes it."""

    run: JudgeRun
    judge_id: str
    earlier: PicksFile
    resume_command: str = "the same command"
    #: Options of one kind of judge, from the command line (the judging page's --port ...).
    options: Mapping[str, object] = field(default_factory=dict)
    #: The trials this judge is asked when it is a share of them (a person, when the design
    #: samples the prompts people judge); None: every trial.
    share: Collection[int] | None = None


@dataclass(frozen=True, slots=True)
class JudgeKind:
    """One ``--judge`` choice: its name, the ``judge_kind`` its picks carry, and how to make
    it. ``default_id`` names the judge when no --judge-id is given (None: the user name).
    ``settings``: a machine judge's settings for a protocol, recorded on each of its picks
    (what made them: a model, its URL and temperature ...); None for a person."""

    name: str
    records_as: str
    make: Callable[[JudgeSetup], Judge] = field(repr=False)
    check: Callable[[JudgeRun], None] = field(default=lambda run: None, repr=False)
    default_id: str | None = None
    settings: Callable[[str], Mapping[str, Any]] | None = field(default=None, repr=False)
    #: The trials a judge of this kind answers, for a kind that imports answers to a share
    #: of them (a panel member's verdicts); checked before anything is written, ``BadInput``
    #: when the judge has none. None: every trial.
    answers: Callable[[JudgeRun, str], Collection[int]] | None = field(default=None, repr=False)
    #: Its answers are read from a file that a rerun reads again (a replay, an import).
    from_file: bool = False

    @property
    def sync_each_pick(self) -> bool:
        """A person's pick is fsynced as it is made (it cannot be asked again); a bot's is
        written without (a kill -9 keeps what was written; only an OS crash could lose the
        last few, which a rerun asks again), a model's and a file's in groups
        (:attr:`sync_grouped`)."""
        return self.records_as not in ("bot", "llm") and not self.from_file

    @property
    def sync_grouped(self) -> bool:
        """A model's picks, and picks read from a file, are synced in groups (every 500 picks
        or 100 ms, and at the end), as bt-generate syncs its rows: a kill -9 loses nothing
        written, a power loss at most the last group, which a rerun asks again (the calls
        cost money; a file is read again)."""
        return self.records_as == "llm" or self.from_file

    @property
    def mechanical(self) -> bool:
        """A bot: its picks never share a file with a person's, and a rerun is cheap (no
        fsync per pick)."""
        return self.records_as == "bot"


def judge_kind(name: str) -> JudgeKind:
    """The kind of judge a ``--judge`` value names, made by the module the registry
    (:mod:`blindtest.model.judge_kinds`) names for it, imported only now."""
    module = importlib.import_module(str(kind_of(name).module))
    make: Callable[[str], JudgeKind] = module.judge_kind
    return make(name)
