"""The records stages share about judging: what a judge may see (``Trial``, ``JudgeView``,
``JudgeRun``), a pick as written to picks.jsonl (``Pick``, ``PicksFile``), typed text made safe
to store (``clean_text``), and the picks contract beyond the schema (``read_picks``,
``check_picks``).

The picks contract: every pick names a trial of this run (a whole number: 3.0 is refused), one
judge picks once per trial unless a later record says ``"correction": true`` (a change the judge
made to that earlier pick, from the history or an undo: the judge's last word counts, the file
stays append-only and the first word stays readable, :attr:`PicksFile.first_picks`) or the
judge's kind answers each trial in several passes (``PICK_KINDS``: an LLM judge's position
swap, ``"pass"`` 1 and 2), the pick is in range for the protocol (triangle 1..3; preference
left / right / tie, or both_bad; pair one of the judge's two nicknames), a judge id holds
no control characters, a pick made against another design is refused, one judge's picks are
made with one set of settings (``judge_settings``: a machine judge's model, URL, temperature,
template ...), a ``pick_id`` (made by the judging page, so a pick sent twice is recorded once)
is never recorded twice by one judge, and bots are never pooled with people.

Two kinds of record are read but are not picks: a skip (``"skipped": true``: the judge put the
trial off; it comes back later in the sitting, and until it is answered the trial is unjudged)
and an LLM judge's failure row (``"failed": true``). A preference judge may say both responses
are bad (``"pick": "both_bad"``): an abstention, kept out of :attr:`PicksFile.picks` (what is
tallied) and counted in :attr:`PicksFile.abstentions`, never a tie.

Shared by the judge stage, the audit, the analysis and the terminal session, so none of them
imports another stage. Nothing here holds a correctness flag or an e-value; ``JudgeRun`` holds
the design (the answer key) for the stages that score, never for a display. Files are read
through ``artifacts``; prints nothing, imports no click.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

import orjson

from blindtest import reportfmt
from blindtest.errors import BadInput, option
from blindtest.model.judge_kinds import PICK_KINDS
from blindtest.model.protocols import BOTH_BAD, PROTOCOLS, has_control
from blindtest.rundir import artifacts
from blindtest.rundir.types import DesignRecord, PickRecord

JsonObject = dict[str, Any]

#: An answer to an extra question: one boolean for a question asked once per comparison,
#: ``{"left": bool, "right": bool}`` for one asked of each option (left is option 1).
ExtraAnswer = bool | Mapping[str, bool]
#: The keys of a per-option answer, in display order.
OPTION_ANSWER_KEYS = ("left", "right")


# --------------------------------------------------------------------------- typed text

_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: arrows, Home/End, colours
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC, to BEL or ST
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
    r"|\x1bO."  # SS3: arrows and F1-F4 in application mode
    r"|\x1b[ -/]*[0-~]"  # any other two-character escape
    r"|\x9b[0-?]*[ -/]*[@-~]"  # C1 CSI
)
_BLANKS = re.compile(r"[\t\n\r\v\f\x85\u2028\u2029]+")


def clean_text(text: str) -> str:
    """Typed text as it may be stored in a pick: escape sequences (an arrow key read raw is
    ``ESC [ D``) removed whole, line and tab breaks made spaces, every other control or format
    character (Unicode Cc, Cf) dropped, and the ends trimmed."""
    text = _ESCAPE_SEQUENCE.sub("", text)
    text = _BLANKS.sub(" ", text)
    return "".join(ch for ch in text if unicodedata.category(ch) not in ("Cc", "Cf")).strip()


def judge_id_problem(judge: str) -> str | None:
    """Why ``judge`` cannot be a judge id (it is printed in report tables), or None."""
    if not judge.strip():
        return "a judge id cannot be empty"
    if has_control(judge):
        return (
            f"judge id {judge!r} holds a control character (a newline, tab or escape); "
            "use a plain name"
        )
    return None


# --------------------------------------------------------------------------- what a judge sees


@dataclass(frozen=True, slots=True)
class Trial:
    """One blinded trial: the prompt and the options in display order."""

    number: int
    prompt: str
    options: tuple[str, ...]
    #: A conversation's turns before ``prompt``, as (role, content).
    history: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class JudgeView:
    """Everything a judge may be shown. Nothing here names a model, a side or a position."""

    protocol: str
    trials: tuple[Trial, ...]
    question: str
    #: Extra yes/no questions asked once per comparison (bt-design --ask).
    extra_questions: tuple[str, ...] = ()
    require_reason: bool = False
    sequential: bool = False
    #: The design the trials belong to; picks that name another design are refused.
    design_sha256: str | None = None
    #: Extra yes/no questions asked of each option (bt-design --ask-each); the same words for
    #: every trial, so nothing here depends on which side an option is.
    extra_questions_per_option: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return len(self.trials)

    @property
    def asks_extra(self) -> bool:
        """Whether the judge is asked any extra question after the pick."""
        return bool(self.extra_questions or self.extra_questions_per_option)


@dataclass(frozen=True, slots=True)
class JudgeRun:
    """A loaded run: the view for the judge, and the design (which holds the answer key)."""

    run_dir: Path
    design: DesignRecord = field(repr=False)
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
        view=view_of(loaded.design, trials, loaded.sha256),
    )


def trials_from_records(records: Sequence[JsonObject], design: DesignRecord) -> list[Trial]:
    """Check trials.jsonl against the design (trials 1..N in order, option count per protocol)."""
    expected = int(design["trials"])
    count = PROTOCOLS[design["protocol"]].options
    if len(records) != expected:
        raise BadInput(
            f"{artifacts.TRIALS} holds {reportfmt.count(len(records), 'trial')} but the design "
            f"has {expected}; "
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
                f"{artifacts.TRIALS}:{number}: "
                f"{reportfmt.count(len(record['options']), 'option')}, but a "
                f"{design['protocol']} trial shows {count}"
            )
        history = tuple((t["role"], t["content"]) for t in record.get("history", ()))
        trials.append(Trial(number, record["prompt"], tuple(record["options"]), history))
    return trials


def view_of(
    design: DesignRecord, trials: Sequence[Trial], design_sha256: str | None = None
) -> JudgeView:
    judging = design["judging"]
    return JudgeView(
        protocol=design["protocol"],
        trials=tuple(trials),
        question=judging["question"],
        extra_questions=tuple(judging["extra_questions"]),
        require_reason=bool(judging["require_reason"]),
        sequential=bool(design["sequential"]),
        design_sha256=design_sha256,
        extra_questions_per_option=tuple(judging.get("extra_questions_per_option", ())),
    )


# --------------------------------------------------------------------------- picks


@dataclass(frozen=True, slots=True)
class Pick:
    """One judgement, as written to picks.jsonl. ``line`` is where it was read from, if read.

    ``correction`` marks a record that replaces the same judge's earlier pick for the trial
    (a change from the history, or an undo); ``pick_id`` is the id the judging page made for
    the pick (a resent pick is recorded once); ``judge_kind`` and ``design_sha256`` are
    written on every pick blindtest makes, and may be missing from an external judge's file.
    ``pass_number`` is the record's ``"pass"`` for a kind that answers a trial in several
    passes. ``extra`` keeps what the schema allows beyond these (a field this version does
    not know, an explicit null), so a record read and written again is the same record.
    """

    trial: int
    judge: str
    pick: int | str
    reason: str | None = None
    confidence: float | None = None
    at: str | None = None
    nicknames: tuple[str, str] | None = None
    answers: Mapping[str, ExtraAnswer] | None = None
    bot: Mapping[str, Any] | None = None
    judge_kind: str | None = None
    design_sha256: str | None = None
    correction: bool = False
    pass_number: int | None = None
    pick_id: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    line: int | None = field(default=None, compare=False)

    @property
    def both_bad(self) -> bool:
        """The judge said both responses are bad: an abstention (a preference run only)."""
        return self.pick == BOTH_BAD

    @property
    def kind(self) -> str:
        """The judge kind, also for files written without one: a ``bot`` field marks a bot."""
        if self.judge_kind is not None:
            return self.judge_kind
        return "bot" if self.bot is not None else "external"

    @property
    def slot(self) -> tuple[str, int, int]:
        """What a record fills: one judge's word on one trial, in one pass."""
        return (self.judge, self.trial, self.pass_number or 1)

    def to_record(self) -> PickRecord:
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
            "answers": (
                {q: a if isinstance(a, bool) else dict(a) for q, a in self.answers.items()}
                if self.answers is not None
                else None
            ),
            "bot": dict(self.bot) if self.bot is not None else None,
            "judge_kind": self.judge_kind,
            "design_sha256": self.design_sha256,
            "correction": True if self.correction else None,
            "pass": self.pass_number,
            "pick_id": self.pick_id,
        }
        record.update({key: value for key, value in optional.items() if value is not None})
        record.update({key: value for key, value in self.extra.items() if key not in record})
        return cast(PickRecord, record)  # the optional fields above, then what ``extra`` kept

    @classmethod
    def from_record(cls, record: Mapping[str, Any], line: int | None = None) -> Pick:
        nicknames = record.get("nicknames")
        pick = cls(
            trial=record["trial"],
            judge=record["judge"],
            pick=record["pick"],
            reason=record.get("reason"),
            confidence=record.get("confidence"),
            at=record.get("at"),
            nicknames=(nicknames[0], nicknames[1]) if nicknames else None,
            answers=record.get("answers"),
            bot=record.get("bot"),
            judge_kind=record.get("judge_kind"),
            design_sha256=record.get("design_sha256"),
            correction=record.get("correction") is True,
            pass_number=record.get("pass"),
            pick_id=record.get("pick_id"),
            line=line,
        )
        # Whatever the fields above do not write back (an unknown field, a null) is kept.
        written = pick.to_record()
        extra = {key: value for key, value in record.items() if key not in written}
        return replace(pick, extra=extra) if extra else pick


@dataclass(frozen=True, slots=True)
class JudgeCounts:
    """What one judge's records in a file add up to. ``judged``: trials with a word that
    stands (a pick or "both bad"); ``abstained``: of those, "both bad"; ``changed``: records
    that changed an earlier word (corrections); ``skipped``: skips made; ``skipped_trials``:
    trials skipped at least once; ``unresolved``: trials skipped and never answered (the run
    is unfinished while any remain, as with a trial never shown)."""

    judge: str
    judged: int
    abstained: int
    changed: int
    skipped: int
    skipped_trials: int
    unresolved: int

    def skip_rate(self) -> float | None:
        """Trials skipped at least once, out of the trials the judge has met (judged or
        still skipped); None before any."""
        met = self.judged + self.unresolved
        return self.skipped_trials / met if met else None


@dataclass(frozen=True, slots=True)
class PicksFile:
    """The records of one picks file, read and checked, in file order.

    ``picks`` is what a tally reads: for each judge and trial the judge's last word (a
    correction replaces the earlier pick in place), **without** "both bad" (an abstention:
    ``abstentions`` holds those, to be counted and reported, never folded into wins, losses or
    ties). ``answered`` is both together: every trial a judge has given a word on (what
    completeness counts). ``first_picks`` / ``first_abstentions`` are each judge's first word
    per trial (the result before any change); :meth:`first_words` is the file as it stood
    before any change, for running the same analysis on first picks. ``changes`` counts each
    judge's corrections, ``corrections`` all of them; ``skips`` are the skip records (never
    picks) and :meth:`counts` sums it all up per judge."""

    path: Path
    picks: tuple[Pick, ...]
    torn_line: int | None = None
    corrections: int = 0
    #: Records of a later pass (an LLM judge's position swap): kept, not scored as picks.
    later_passes: tuple[Pick, ...] = ()
    #: Failure rows (``"failed": true``: an LLM judge that got no valid verdict): never picks;
    #: the trial stays to be judged.
    failures: tuple[JsonObject, ...] = ()
    #: The last words that are "both bad" (abstentions), in file order.
    abstentions: tuple[Pick, ...] = ()
    #: Each judge's first word per trial, without "both bad" (see ``first_abstentions``).
    first_picks: tuple[Pick, ...] = ()
    first_abstentions: tuple[Pick, ...] = ()
    #: Skip records (``"skipped": true``), in file order: a trial put off, not judged.
    skips: tuple[Pick, ...] = ()
    #: judge -> how many of its records changed an earlier word (corrections).
    changes: Mapping[str, int] = field(default_factory=dict)
    #: (judge, pick id) of every record that carries one (the page's ids: a pick sent again
    #: is known).
    pick_ids: frozenset[tuple[str, str]] = frozenset()

    def pick_ids_of(self, judge: str) -> frozenset[str]:
        """The pick ids ``judge`` has recorded in this file."""
        return frozenset(pick_id for who, pick_id in self.pick_ids if who == judge)

    @property
    def judges(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.judge for p in self.answered))

    @property
    def answered(self) -> tuple[Pick, ...]:
        """Every last word, "both bad" included, where each trial was first judged in the
        file: the trials each judge has judged (a skip is not a word)."""
        first = {p.slot: p.line for p in (*self.first_picks, *self.first_abstentions)}
        return tuple(
            sorted(
                (*self.picks, *self.abstentions),
                key=lambda p: first.get(p.slot, p.line) or 0,
            )
        )

    def by(self, judge: str) -> tuple[Pick, ...]:
        """One judge's picks (not its abstentions), in trial order."""
        return tuple(sorted((p for p in self.picks if p.judge == judge), key=lambda p: p.trial))

    def counts(self) -> dict[str, JudgeCounts]:
        """Per judge, in order of first appearance: what its records add up to."""
        judged: dict[str, set[int]] = {}
        for pick in self.answered:
            judged.setdefault(pick.judge, set()).add(pick.trial)
        for skip in self.skips:
            judged.setdefault(skip.judge, set())
        result = {}
        for judge, trials in judged.items():
            own_skips = [s.trial for s in self.skips if s.judge == judge]
            result[judge] = JudgeCounts(
                judge=judge,
                judged=len(trials),
                abstained=sum(1 for p in self.abstentions if p.judge == judge),
                changed=self.changes.get(judge, 0),
                skipped=len(own_skips),
                skipped_trials=len(set(own_skips)),
                unresolved=len(set(own_skips) - trials),
            )
        return result

    def first_words(self) -> PicksFile:
        """The file as it stood before any change: each judge's first word per trial, as
        ``picks`` and ``abstentions`` (no corrections)."""
        return replace(
            self,
            picks=self.first_picks,
            abstentions=self.first_abstentions,
            corrections=0,
            changes={},
        )


def pick_problem(view: JudgeView, pick: int | str) -> str | None:
    """Why ``pick`` is out of range for the protocol, or None when it is in range."""
    return PROTOCOLS[view.protocol].pick_problem(pick)


def _shown(value: object) -> str:
    # As the JSON said it: 'fox', 4, 2.0, true.
    return repr(value) if isinstance(value, str) else str(value).lower()


def trial_problem(view: JudgeView, trial: object) -> str | None:
    """Why ``trial`` does not name a trial of this run, or None."""
    if type(trial) is not int:
        if isinstance(trial, float) and trial.is_integer():
            return f"trial {trial} must be a whole number written without a decimal point"
        return f"trial {_shown(trial)} is not a whole number"
    if 1 <= trial <= view.total:
        return None
    return f"trial {trial} is not in this run (it has trials 1..{view.total})"


_POOL_WORDS = {
    "people": ("a person", "people"),
    "bots": ("a bot", "bots"),
    "llm": ("an LLM judge", "LLM judges"),
}


def mixing_problem(picks: Iterable[Pick], where: str) -> str | None:
    """Why these picks may not be analyzed together (bots pooled with people), or None."""
    pools: dict[str, list[str]] = {}
    for pick in picks:
        kind = PICK_KINDS.get(pick.kind)
        names = pools.setdefault(kind.pool if kind is not None else "people", [])
        if pick.judge not in names:
            names.append(pick.judge)
    if len(pools) < 2:
        return None
    order = sorted(pools, key=lambda pool: ("bots", "llm", "people").index(pool))
    parts = []
    for pool in order:
        one, many = _POOL_WORDS[pool]
        names = pools[pool]
        listed = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
        parts.append(f"{one if len(names) == 1 else many} ({listed})")
    verb = "mix" if where.startswith("the ") else "mixes"
    return (
        f"{where} {verb} {' with '.join(parts)}; bots are never pooled with people: analyze "
        f"them separately with {option('picks')}"
    )


#: The fields a machine judge's pick records its settings in (``judge_settings_sha256`` is
#: :func:`settings_sha256` of ``judge_settings``).
SETTINGS_FIELD = "judge_settings"
SETTINGS_HASH_FIELD = "judge_settings_sha256"


def settings_sha256(settings: Mapping[str, Any]) -> str:
    """The hex SHA-256 of ``settings`` as sorted, compact JSON: the same settings give the
    same hash on any machine."""
    return hashlib.sha256(orjson.dumps(dict(settings), option=orjson.OPT_SORT_KEYS)).hexdigest()


def settings_of(pick: Pick) -> Mapping[str, Any] | None:
    """The judge settings a pick records, or None (a person's pick, a file from before
    settings were recorded, an external judge's)."""
    value = pick.extra.get(SETTINGS_FIELD)
    return value if isinstance(value, dict) else None


def settings_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """Each setting that differs, as ``name old -> new`` (JSON values; ``none`` when absent),
    in the order of ``new`` and then the names only ``old`` has."""
    return [
        f"{name} {_setting(old, name)} -> {_setting(new, name)}"
        for name in changed_settings(old, new)
    ]


def changed_settings(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The names of the settings that differ, in the order of :func:`settings_changes`."""
    names = [*new, *(name for name in old if name not in new)]
    return [name for name in names if name not in old or name not in new or old[name] != new[name]]


def _setting(settings: Mapping[str, Any], name: str) -> str:
    if name not in settings:
        return "none"
    value = settings[name]
    if name.endswith("sha256") and isinstance(value, str):
        return value[:12]  # as design hashes are shown
    return orjson.dumps(value).decode()


#: The bt-judge option each recorded setting comes from, for the message that refuses a
#: resume with other settings.
SETTING_OPTIONS = {
    "model": option("kind", "llm:MODEL"),
    "url": option("llm.url"),
    "temperature": option("llm.temperature"),
    "template_sha256": option("llm.template"),
    "min_confidence": option("llm.min_confidence"),
    "swap": f"{option('llm.swap', True)}/{option('llm.swap', False)}",
    "inconsistent": option("llm.inconsistent"),
    "bot": option("kind", "bot:KIND"),
    "duplicate_threshold": "",
}


class PicksChecker:
    """Applies the picks contract one pick at a time, remembering what it has seen."""

    def __init__(self, view: JudgeView) -> None:
        self.view = view
        self.first_line: dict[tuple[str, int, int], int | None] = {}
        self.nicknames: dict[str, tuple[set[str], int | None]] = {}
        #: judge -> the settings its first pick that records settings made, and that line.
        self.settings: dict[str, tuple[Mapping[str, Any], int | None]] = {}
        #: (judge, pick id) -> the line it was first recorded on.
        self.pick_ids: dict[tuple[str, str], int | None] = {}

    def check(self, pick: Pick) -> str | None:
        for problem in (
            trial_problem(self.view, pick.trial),
            judge_id_problem(pick.judge),
            self._design(pick),
            self._pass(pick),
            self._pick_id(pick),
            self._duplicate(pick),
            self._range(pick),
            self._settings(pick),
        ):
            if problem is not None:
                return problem
        return self._answers(pick)

    def accept(self, pick: Pick) -> None:
        self.first_line.setdefault(pick.slot, pick.line)
        if pick.pick_id is not None:
            self.pick_ids.setdefault((pick.judge, pick.pick_id), pick.line)
        if PROTOCOLS[self.view.protocol].pick_kind == "nickname":
            names, line = self.nicknames.get(pick.judge, (set(), pick.line))
            names.update(pick.nicknames or (str(pick.pick),))
            self.nicknames[pick.judge] = (names, line)
        settings = settings_of(pick)
        if settings is not None:
            self.settings.setdefault(pick.judge, (settings, pick.line))

    def knows(self, judge: str, pick_id: str) -> bool:
        """Whether ``judge`` already has a record with ``pick_id`` (a pick sent twice)."""
        return (judge, pick_id) in self.pick_ids

    def _pick_id(self, pick: Pick) -> str | None:
        if pick.pick_id is None or not self.knows(pick.judge, pick.pick_id):
            return None
        line = self.pick_ids[(pick.judge, pick.pick_id)]
        where = f" (on line {line})" if line is not None else ""
        return (
            f"pick id {pick.pick_id!r} of judge {pick.judge!r} is recorded already{where}; a "
            "pick sent twice is recorded once"
        )

    def _settings(self, pick: Pick) -> str | None:
        settings = settings_of(pick)
        if settings is None or pick.judge not in self.settings:
            return None
        first, line = self.settings[pick.judge]
        changes = settings_changes(first, settings)
        if not changes:
            return None
        since = f" since line {line}" if line is not None else ""
        return (
            f"judge {pick.judge!r} changed its settings{since} ({', '.join(changes)}); one "
            "judge's picks are made with one set of settings: give the others a file of "
            "their own"
        )

    def _design(self, pick: Pick) -> str | None:
        ours = self.view.design_sha256
        if pick.design_sha256 is None or ours is None or pick.design_sha256 == ours:
            return None
        return (
            f"this pick was made against design {pick.design_sha256[:12]}, not this run's "
            f"design {ours[:12]}; picks from another run cannot be scored here"
        )

    def _pass(self, pick: Pick) -> str | None:
        if pick.pass_number is None:
            return None
        kind = PICK_KINDS.get(pick.kind)
        passes = kind.passes if kind is not None else 1
        if passes == 1:
            return (
                f"pass {pick.pass_number} on a pick by a {pick.kind} judge, which answers each "
                'trial once; "pass" is for a judge kind that answers in several (llm)'
            )
        if type(pick.pass_number) is not int or not 1 <= pick.pass_number <= passes:
            return f"pass {_shown(pick.pass_number)} is not 1..{passes} for a {pick.kind} judge"
        return None

    def _duplicate(self, pick: Pick) -> str | None:
        key = pick.slot
        if key not in self.first_line:
            if pick.correction:
                return (
                    f"a correction by judge {pick.judge!r} for trial {pick.trial}, which that "
                    "judge has no earlier pick for"
                )
            return None
        if pick.correction:
            return None
        first = self.first_line[key]
        where = f" (the first is on line {first})" if first is not None else ""
        again = f" in pass {pick.pass_number}" if pick.pass_number is not None else ""
        return (
            f"second pick by judge {pick.judge!r} for trial {pick.trial}{again}{where}; only a "
            'record marked "correction": true may replace a pick'
        )

    def _range(self, pick: Pick) -> str | None:
        problem = pick_problem(self.view, pick.pick)
        if problem is not None or PROTOCOLS[self.view.protocol].pick_kind != "nickname":
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
        """Each answer is to a question the design asks, in the form it asks it: a boolean
        (--ask) or {"left": bool, "right": bool} (--ask-each). The schema allows both forms
        for any question; only the design says which one a question takes."""
        for question, answer in (pick.answers or {}).items():
            if question in self.view.extra_questions_per_option:
                if isinstance(answer, bool):
                    return (
                        f"answers {question!r} with one {_shown(answer)} for the comparison, "
                        'but the design asks it of each option: give {"left": true/false, '
                        '"right": true/false}'
                    )
            elif question in self.view.extra_questions:
                if not isinstance(answer, bool):
                    return (
                        f"answers {question!r} per option, but the design asks it once per "
                        "comparison: give true or false"
                    )
            else:
                return f"answers a question the design does not ask: {question!r}"
        return None


def last_words(picks: Iterable[Pick]) -> tuple[Pick, ...]:
    """Each judge's last word per trial (and pass), where the first pick stood (file order is
    kept). The kept record loses its ``correction`` mark: in the result it replaces nothing.
    """
    kept: dict[tuple[str, int, int], Pick] = {}
    for pick in picks:
        key = pick.slot
        if key in kept:
            kept[key] = replace(pick, correction=False)
        else:
            kept[key] = pick
    return tuple(kept.values())


def check_picks(picks: Iterable[Pick], view: JudgeView, where: str) -> tuple[Pick, ...]:
    """Apply the picks contract; raise ``BadInput`` naming ``where:line`` of the first breach.

    Returns the picks that count: each judge's last word per trial (see ``last_words``).
    """
    checker = PicksChecker(view)
    accepted = []
    for pick in picks:
        problem = checker.check(pick)
        if problem is not None:
            line = f":{pick.line}" if pick.line is not None else ""
            raise BadInput(f"{where}{line}: {problem}")
        checker.accept(pick)
        accepted.append(pick)
    mixed = mixing_problem(accepted, where)
    if mixed is not None:
        raise BadInput(mixed)
    return last_words(accepted)


#: A record that is no pick: the judge put the trial off (``"skipped": true``).
SKIPPED_FIELD = "skipped"


def skip_record(trial: int, judge: str, at: str | None) -> JsonObject:
    """The record a skip appends (its ``pick`` is the word ``skipped``; readers never take it
    for a pick)."""
    record: JsonObject = {
        "schema": artifacts.schema_tag("picks"),
        "trial": trial,
        "judge": judge,
        "pick": "skipped",
        SKIPPED_FIELD: True,
    }
    if at is not None:
        record["at"] = at
    return record


def read_picks(path: Path, view: JudgeView, *, missing_ok: bool = False) -> PicksFile:
    """Read a picks file, validate every line against the schema and the contract.

    A torn final line (an append cut short by a crash) is ignored and reported in
    ``torn_line``; any other bad line raises ``BadInput`` with its line number. The picks
    returned are each judge's last word per trial, "both bad" apart (see :class:`PicksFile`).
    """
    if missing_ok and not path.exists():
        return PicksFile(path=path, picks=())
    contents = artifacts.read_jsonl(path, "picks")
    rows = list(zip(contents.records, contents.lines, strict=True))
    failures = tuple(record for record, _ in rows if record.get("failed") is True)
    skips = tuple(
        Pick.from_record(record, line=number)
        for record, number in rows
        if record.get(SKIPPED_FIELD) is True and record.get("failed") is not True
    )
    for skip in skips:
        problem = trial_problem(view, skip.trial) or judge_id_problem(skip.judge)
        if problem is not None:
            raise BadInput(f"{path.name}:{skip.line}: {problem}")
    picks = [
        Pick.from_record(record, line=number)
        for record, number in rows
        if record.get("failed") is not True and record.get(SKIPPED_FIELD) is not True
    ]
    kept = check_picks(picks, view, path.name)
    firsts = _first_words(picks)
    abstains = PROTOCOLS[view.protocol].prefers

    def split(words: Iterable[Pick]) -> tuple[tuple[Pick, ...], tuple[Pick, ...]]:
        passed = [p for p in words if (p.pass_number or 1) == 1]
        return (
            tuple(p for p in passed if not (abstains and p.both_bad)),
            tuple(p for p in passed if abstains and p.both_bad),
        )

    counted, abstained = split(kept)
    first_counted, first_abstained = split(firsts)
    changes: dict[str, int] = {}
    for pick in picks:
        if pick.correction:
            changes[pick.judge] = changes.get(pick.judge, 0) + 1
    return PicksFile(
        path=path,
        picks=counted,
        torn_line=contents.torn_line,
        corrections=sum(p.correction for p in picks),
        later_passes=tuple(p for p in kept if (p.pass_number or 1) > 1),
        failures=failures,
        abstentions=abstained,
        first_picks=first_counted,
        first_abstentions=first_abstained,
        skips=skips,
        changes=changes,
        pick_ids=frozenset((p.judge, p.pick_id) for p in picks if p.pick_id is not None),
    )


def _first_words(picks: Iterable[Pick]) -> tuple[Pick, ...]:
    """Each judge's first word per trial (and pass), in file order."""
    first: dict[tuple[str, int, int], Pick] = {}
    for pick in picks:
        first.setdefault(pick.slot, pick)
    return tuple(first.values())


def load_picks(run_dir: Path, picks_path: Path | None = None) -> tuple[JudgeRun, PicksFile]:
    """For bt-analyze and ``bt-judge --check``: the run and its validated picks file."""
    run = load_judge_run(run_dir)
    path = picks_path if picks_path is not None else run_dir / artifacts.PICKS
    return run, read_picks(path, run.view)


def remaining_trials(
    view: JudgeView, picks: Iterable[Pick], judge: str, later: Iterable[Pick] = ()
) -> list[Trial]:
    """The trials ``judge`` has not judged yet, in design order; the first is the resume point.
    ``picks`` are the judge's words, "both bad" included (``PicksFile.answered``): an
    abstention is a word on the trial, a skip is not.

    A trial whose record says ``"pass": 1`` but whose pass 2 is not in ``later`` (a process
    killed between the two appends of an LLM judge's position swap) is not done either."""
    own = [p for p in picks if p.judge == judge]
    second = {p.trial for p in later if p.judge == judge}
    done = {p.trial for p in own if p.pass_number != 1 or p.trial in second}
    return [trial for trial in view.trials if trial.number not in done]


def judge_nicknames(picks: Iterable[Pick], judge: str) -> tuple[str, str] | None:
    """The two nicknames a pair judge chose, from that judge's earlier picks."""
    for pick in picks:
        if pick.judge == judge and pick.nicknames is not None:
            return pick.nicknames
    return None


# --------------------------------------------------------------------------- a sitting


@dataclass(frozen=True, slots=True)
class JudgingResult:
    """How a sitting ended: "complete", "stopped" (sequential rule met) or "quit".

    ``kept_trial`` is a trial whose pick the judge began to take back without picking
    again: the earlier pick stands."""

    status: str
    judged: int
    total: int
    judged_now: int
    next_trial: int | None
    kept_trial: int | None = None

    @property
    def stopped_early(self) -> bool:
        return self.status == "stopped"
