"""The judging stage as a library: what a judge may see, where a judge resumes, which picks are
valid, how a pick scores against the arrangement, the mechanical judges, and the hidden
sequential stopping rule.

It owns the picks contract beyond the schema: every pick names a trial of this run, one judge
picks once per trial, and the pick is in range for the protocol (triangle 1..3; preference
left / right / tie; pair one of the judge's two nicknames).

It must never hand the arrangement, a correctness flag or an e-value to anything that displays
things: a session gets a ``JudgeView`` (the blinded trials and the question) and a ``Recorder``
whose ``record`` answers only "go on" or "stop". It opens no file itself (``artifacts`` does),
prints nothing and imports no click; side effects come in as an ``append`` callback.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from blindtest import artifacts, bots
from blindtest.bots import RandBelow
from blindtest.errors import BadInput
from blindtest.rng import DesignRng

JsonObject = dict[str, Any]
Append = Callable[[JsonObject], None]

OPTION_COUNT = {"triangle": 3, "pair": 2, "preference": 2}
PREFERENCE_PICKS = ("left", "right", "tie")
BOT_KINDS = ("length", "duplicate", "random")
JUDGE_KINDS = ("human", *(f"bot:{kind}" for kind in BOT_KINDS))


# --------------------------------------------------------------------------- what a judge sees


@dataclass(frozen=True, slots=True)
class Trial:
    """One blinded trial: the prompt and the options in display order."""

    number: int
    prompt: str
    options: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class JudgeView:
    """Everything a judge may be shown. Nothing here names a model, a side or a position."""

    protocol: str
    trials: tuple[Trial, ...]
    question: str
    extra_questions: tuple[str, ...] = ()
    require_reason: bool = False
    sequential: bool = False

    @property
    def total(self) -> int:
        return len(self.trials)


@dataclass(frozen=True, slots=True)
class JudgeRun:
    """A loaded run: the view for the judge, and the design (which holds the answer key)."""

    run_dir: Path
    design: JsonObject = field(repr=False)
    design_sha256: str
    view: JudgeView

    @property
    def seed(self) -> str:
        return str(self.design["seed"])

    @property
    def alpha(self) -> float:
        return float(self.design["alpha"])


def load_judge_run(run_dir: Path) -> JudgeRun:
    """Load the design (refused unless it matches its hash) and the blinded trials."""
    loaded = artifacts.load_design(run_dir)
    trials_path = run_dir / artifacts.TRIALS
    if not trials_path.exists():
        raise BadInput(f"{trials_path}: not found; run bt-generate {run_dir} first")
    contents = artifacts.read_jsonl(trials_path, "trials")
    if contents.torn_line is not None:
        raise BadInput(
            f"{artifacts.TRIALS}:{contents.torn_line}: incomplete final line; "
            f"rerun bt-generate {run_dir} to finish it"
        )
    trials = trials_from_records(contents.records, loaded.design)
    return JudgeRun(
        run_dir=run_dir,
        design=loaded.design,
        design_sha256=loaded.sha256,
        view=view_of(loaded.design, trials),
    )


def trials_from_records(records: Sequence[JsonObject], design: Mapping[str, Any]) -> list[Trial]:
    """Check trials.jsonl against the design (trials 1..N in order, option count per protocol)."""
    expected = int(design["trials"])
    count = OPTION_COUNT[design["protocol"]]
    if len(records) != expected:
        raise BadInput(
            f"{artifacts.TRIALS} holds {len(records)} trials but the design has {expected}; "
            "rerun bt-generate to finish it"
        )
    trials = []
    for number, record in enumerate(records, start=1):
        if record["trial"] != number:
            raise BadInput(
                f"{artifacts.TRIALS}:{number}: expected trial {number}, found {record['trial']}"
            )
        if len(record["options"]) != count:
            raise BadInput(
                f"{artifacts.TRIALS}:{number}: {len(record['options'])} options, but a "
                f"{design['protocol']} trial shows {count}"
            )
        trials.append(Trial(number, record["prompt"], tuple(record["options"])))
    return trials


def view_of(design: Mapping[str, Any], trials: Sequence[Trial]) -> JudgeView:
    judging = design["judging"]
    return JudgeView(
        protocol=design["protocol"],
        trials=tuple(trials),
        question=judging["question"],
        extra_questions=tuple(judging["extra_questions"]),
        require_reason=bool(judging["require_reason"]),
        sequential=bool(design["sequential"]),
    )


# --------------------------------------------------------------------------- picks


@dataclass(frozen=True, slots=True)
class Pick:
    """One judgement, as written to picks.jsonl. ``line`` is where it was read from, if read."""

    trial: int
    judge: str
    pick: int | str
    reason: str | None = None
    confidence: float | None = None
    at: str | None = None
    nicknames: tuple[str, str] | None = None
    answers: Mapping[str, bool] | None = None
    bot: Mapping[str, Any] | None = None
    line: int | None = field(default=None, compare=False)

    def to_record(self) -> JsonObject:
        record: JsonObject = {
            "schema": artifacts.schema_tag("picks"),
            "trial": self.trial,
            "judge": self.judge,
            "pick": self.pick,
        }
        optional: dict[str, Any] = {
            "reason": self.reason,
            "confidence": self.confidence,
            "at": self.at,
            "nicknames": list(self.nicknames) if self.nicknames else None,
            "answers": dict(self.answers) if self.answers is not None else None,
            "bot": dict(self.bot) if self.bot is not None else None,
        }
        record.update({key: value for key, value in optional.items() if value is not None})
        return record

    @classmethod
    def from_record(cls, record: Mapping[str, Any], line: int | None = None) -> Pick:
        nicknames = record.get("nicknames")
        return cls(
            trial=record["trial"],
            judge=record["judge"],
            pick=record["pick"],
            reason=record.get("reason"),
            confidence=record.get("confidence"),
            at=record.get("at"),
            nicknames=(nicknames[0], nicknames[1]) if nicknames else None,
            answers=record.get("answers"),
            bot=record.get("bot"),
            line=line,
        )


@dataclass(frozen=True, slots=True)
class PicksFile:
    """The valid picks of one file, in file order."""

    path: Path
    picks: tuple[Pick, ...]
    torn_line: int | None = None

    @property
    def judges(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.judge for p in self.picks))

    def by(self, judge: str) -> tuple[Pick, ...]:
        """One judge's picks, in trial order."""
        return tuple(sorted((p for p in self.picks if p.judge == judge), key=lambda p: p.trial))


def pick_problem(view: JudgeView, pick: int | str) -> str | None:
    """Why ``pick`` is out of range for the protocol, or None when it is in range."""
    if view.protocol == "triangle":
        # bool is an int in Python, but JSON true is not a position.
        if type(pick) is int and 1 <= pick <= 3:
            return None
        return f"pick {pick!r} is out of range for a triangle run (1, 2 or 3)"
    if view.protocol == "preference":
        if pick in PREFERENCE_PICKS:
            return None
        return f"pick {pick!r} is out of range for a preference run (left, right or tie)"
    if isinstance(pick, str) and pick and pick not in PREFERENCE_PICKS:
        return None
    return f"pick {pick!r} is out of range for a pair run (a nickname for option 1)"


class _Checker:
    """Applies the picks contract one pick at a time, remembering what it has seen."""

    def __init__(self, view: JudgeView) -> None:
        self.view = view
        self.first_line: dict[tuple[str, int], int | None] = {}
        self.nicknames: dict[str, tuple[set[str], int | None]] = {}

    def check(self, pick: Pick) -> str | None:
        for problem in (self._trial(pick), self._duplicate(pick), self._range(pick)):
            if problem is not None:
                return problem
        return self._answers(pick)

    def accept(self, pick: Pick) -> None:
        self.first_line[(pick.judge, pick.trial)] = pick.line
        if self.view.protocol == "pair":
            names, line = self.nicknames.get(pick.judge, (set(), pick.line))
            names.update(pick.nicknames or (str(pick.pick),))
            self.nicknames[pick.judge] = (names, line)

    def _trial(self, pick: Pick) -> str | None:
        if 1 <= pick.trial <= self.view.total:
            return None
        return f"trial {pick.trial} is not in this run (it has trials 1..{self.view.total})"

    def _duplicate(self, pick: Pick) -> str | None:
        key = (pick.judge, pick.trial)
        if key not in self.first_line:
            return None
        first = self.first_line[key]
        where = f" (the first is on line {first})" if first is not None else ""
        return f"second pick by judge {pick.judge!r} for trial {pick.trial}{where}"

    def _range(self, pick: Pick) -> str | None:
        problem = pick_problem(self.view, pick.pick)
        if problem is not None or self.view.protocol != "pair":
            return problem
        if pick.nicknames is not None and pick.pick not in pick.nicknames:
            return f"pick {pick.pick!r} is not one of its nicknames {list(pick.nicknames)}"
        names, line = self.nicknames.get(pick.judge, (set(), None))
        merged = names | set(pick.nicknames or (str(pick.pick),))
        if len(merged) > 2:
            since = f" since line {line}" if line is not None else ""
            return (
                f"judge {pick.judge!r} uses a third nickname ({', '.join(sorted(merged))}"
                f"{since}); a pair judge keeps the same two nicknames"
            )
        return None

    def _answers(self, pick: Pick) -> str | None:
        for question in pick.answers or {}:
            if question not in self.view.extra_questions:
                return f"answers a question the design does not ask: {question!r}"
        return None


def check_picks(picks: Iterable[Pick], view: JudgeView, where: str) -> tuple[Pick, ...]:
    """Apply the picks contract; raise ``BadInput`` naming ``where:line`` of the first breach."""
    checker = _Checker(view)
    accepted = []
    for pick in picks:
        problem = checker.check(pick)
        if problem is not None:
            line = f":{pick.line}" if pick.line is not None else ""
            raise BadInput(f"{where}{line}: {problem}")
        checker.accept(pick)
        accepted.append(pick)
    return tuple(accepted)


def read_picks(path: Path, view: JudgeView, *, missing_ok: bool = False) -> PicksFile:
    """Read a picks file, validate every line against the schema and the contract.

    A torn final line (an append cut short by a crash) is ignored and reported in
    ``torn_line``; any other bad line raises ``BadInput`` with its line number.
    """
    if missing_ok and not path.exists():
        return PicksFile(path=path, picks=())
    contents = artifacts.read_jsonl(path, "picks")
    picks = [
        Pick.from_record(record, line=number)
        for record, number in zip(contents.records, contents.lines, strict=True)
    ]
    torn = contents.torn_line
    return PicksFile(path=path, picks=check_picks(picks, view, path.name), torn_line=torn)


def load_picks(run_dir: Path, picks_path: Path | None = None) -> tuple[JudgeRun, PicksFile]:
    """For bt-analyze and ``bt-judge --check``: the run and its validated picks file."""
    run = load_judge_run(run_dir)
    path = picks_path if picks_path is not None else run_dir / artifacts.PICKS
    return run, read_picks(path, run.view)


def remaining_trials(view: JudgeView, picks: Iterable[Pick], judge: str) -> list[Trial]:
    """The trials ``judge`` has not judged yet, in design order; the first is the resume point."""
    done = {p.trial for p in picks if p.judge == judge}
    return [trial for trial in view.trials if trial.number not in done]


def resume_point(view: JudgeView, picks: Iterable[Pick], judge: str) -> int | None:
    """The first trial without a pick by ``judge``, or None when every trial has one."""
    remaining = remaining_trials(view, picks, judge)
    return remaining[0].number if remaining else None


def judge_nicknames(picks: Iterable[Pick], judge: str) -> tuple[str, str] | None:
    """The two nicknames a pair judge chose, from that judge's earlier picks."""
    for pick in picks:
        if pick.judge == judge and pick.nicknames is not None:
            return pick.nicknames
    return None


# --------------------------------------------------------------------------- scoring


def arrangement_entry(design: Mapping[str, Any], trial: int) -> Mapping[str, Any]:
    entry: Mapping[str, Any] = design["arrangement"][trial - 1]
    if entry["trial"] != trial:  # the schema does not force the order; the design builder does
        entry = next(e for e in design["arrangement"] if e["trial"] == trial)
    return entry


def triangle_correct(design: Mapping[str, Any], pick: Pick) -> bool:
    """Whether a triangle pick found the odd response."""
    return bool(pick.pick == arrangement_entry(design, pick.trial)["odd_position"])


def preferred_side(design: Mapping[str, Any], pick: Pick) -> str | None:
    """Preference: the side ("A"/"B") the judge preferred, or None for a tie."""
    left = arrangement_entry(design, pick.trial)["left"]
    if pick.pick == "tie":
        return None
    return str(left) if pick.pick == "left" else ("B" if left == "A" else "A")


def option1_side(design: Mapping[str, Any], trial: int) -> str:
    """Pair: the side ("A"/"B") shown as option 1, which the pick's nickname was given to."""
    return str(arrangement_entry(design, trial)["left"])


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
    ) -> None:
        self._run = run  # private: it holds the answer key, which a session must not reach
        self.judge = judge
        self._append = append
        self._checker = _Checker(run.view)
        self._judged: set[int] = set()
        self._rule = StoppingRule(run.alpha, log_e) if run.view.sequential else None
        for pick in earlier:
            self._checker.accept(pick)
            if pick.judge == judge:
                self._note(pick)

    def _note(self, pick: Pick) -> None:
        self._judged.add(pick.trial)
        if self._rule is not None:
            self._rule.observe(triangle_correct(self._run.design, pick))

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

    def record(self, pick: Pick) -> bool:
        if pick.judge != self.judge:
            raise ValueError(f"this recorder writes picks by {self.judge!r}, not {pick.judge!r}")
        problem = self._checker.check(pick)
        if problem is not None:
            raise BadInput(problem)
        self._append(pick.to_record())
        self._checker.accept(pick)
        self._note(pick)
        return self.done


# --------------------------------------------------------------------------- mechanical judges


@dataclass(frozen=True, slots=True)
class BotResult:
    judge: str
    picks: int
    stopped_early: bool


#: The nicknames a pair bot gives: ``length`` names option 1 by whether it is the longer one.
BOT_NICKNAMES = {"length": ("longer", "shorter"), "random": ("X", "Y")}


def check_bot(kind: str, protocol: str) -> None:
    """Refuse a bot the protocol has no form for, before anything is written."""
    if kind not in BOT_KINDS:
        raise BadInput(f"unknown bot {kind!r}; use one of {', '.join(BOT_KINDS)}")
    if kind == "duplicate" and protocol != "triangle":
        raise BadInput(
            f"bot:duplicate needs a triangle run: in a {protocol} run the two options come "
            "from two different models, so a near-duplicate exposes nothing; use bot:length "
            "or bot:random"
        )


def bot_pick(kind: str, protocol: str, trial: Trial, rng: RandBelow) -> Pick:
    """One mechanical pick, with ``bot`` recording how it was made (judge left empty)."""
    options = trial.options
    if protocol == "triangle":
        if kind == "duplicate":
            made = bots.duplicate_bot(options, rng)
            how = {"name": "duplicate", "fired": made.fired, "similarity": made.similarity}
            return Pick(trial=trial.number, judge="", pick=made.pick, bot=how)
        value = bots.length_bot(options, rng) if kind == "length" else bots.random_bot(options, rng)
        return Pick(trial=trial.number, judge="", pick=value, bot={"name": kind})
    if protocol == "preference":
        choice = (
            bots.length_preference_bot(options)
            if kind == "length"
            else bots.random_preference_bot(options, rng)
        )
        return Pick(trial=trial.number, judge="", pick=choice, bot={"name": kind})
    names = BOT_NICKNAMES[kind]
    nickname = (
        bots.length_pair_bot(options, rng, names)
        if kind == "length"
        else bots.random_pair_bot(options, rng, names)
    )
    return Pick(trial=trial.number, judge="", pick=nickname, nicknames=names, bot={"name": kind})


def run_bot(run: JudgeRun, kind: str, recorder: Recorder) -> BotResult:
    """Judge the trials mechanically into ``recorder``, in design order, stopping where a
    person would have stopped (a sequential design's rule applies to bots too).

    The generator is ``DesignRng(seed, "bot:<kind>")``, so a rerun writes the same picks.
    """
    check_bot(kind, run.view.protocol)
    rng = DesignRng(run.seed, f"bot:{kind}")
    written = 0
    for trial in remaining_trials(run.view, (), recorder.judge):
        if recorder.done:
            break
        made = bot_pick(kind, run.view.protocol, trial, rng)
        recorder.record(replace(made, judge=recorder.judge))
        written += 1
    return BotResult(judge=recorder.judge, picks=written, stopped_early=recorder.stopped_early)


# --------------------------------------------------------------------------- the output file


def plan_output(existing: PicksFile, judge: str, *, bot: bool, force: bool) -> bool:
    """Decide what happens to an existing picks file before anything is written.

    Returns True when the file must be restarted empty (``--force``), False to append to it
    (a person resuming, or a new file). A bot refuses an existing file without ``--force``,
    so its picks are never mixed into an earlier run of itself; ``--force`` refuses a file
    that holds another judge's picks, which it would delete.
    """
    path = existing.path
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
