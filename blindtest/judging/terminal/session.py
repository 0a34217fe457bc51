"""The interactive judging session in a terminal, for a human judge: a ``Judge``
(``blindtest.judging.driver``) that the driver asks one trial at a time.

It owns the flow of a sitting on the screen: the intro, the questions and keys of each protocol
(``terminal.questions``), a trial laid out (``terminal.layout``) and paged (``terminal.pager``)
on the console (``terminal.console``), the typed answers (``terminal.asking``), the fatigue
prompt, and the quit / resume / end messages.

It must never show anything that depends on the arrangement: it gets a ``JudgeView`` (the
blinded trials and the question) and, for each trial, a ``Turn`` from the driver. No score, no
correctness, no e-value and no timing is shown. Every pick is appended (by the driver, through
the recorder) before the next trial is drawn, so quitting in any way keeps it.

``u`` takes back the last pick while the next trial is shown: the trial is judged again (the
reason and answers given before are offered again) and the new pick is appended with
``correction: true`` (the file stays append-only). ``h`` lists the picks made so far (trial,
pick, reason, answers; nothing about sides) and changes any of them the same way; ``s`` puts the
trial off until the others are judged (or, on a trial shown again to be changed, keeps the
earlier pick); in a preference, ``x`` says both responses are bad (an abstention, not a tie).
Responses are drawn from their markdown as the judging page renders them
(:mod:`blindtest.judging.terminal.markdown`), unless the design strips formatting.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from blindtest.errors import Interrupted
from blindtest.judging.answers import Answered, pick_from_answer
from blindtest.judging.driver import (
    Answer,
    Judge,
    JudgeKind,
    JudgeSetup,
    Revise,
    Skip,
    Stop,
    TakeBack,
    Turn,
    drive,
)
from blindtest.judging.recorder import Recorder
from blindtest.judging.terminal.asking import Asker
from blindtest.judging.terminal.console import Console, InputEnded
from blindtest.judging.terminal.layout import (
    MAX_PROSE_WIDTH,
    fit,
    side_by_side,
    trial_layout,
    wrap_prose_line,
)
from blindtest.judging.terminal.pager import Pager, Screen
from blindtest.judging.terminal.questions import (
    answer_keys,
    closing_message,
    fatigue_words,
    help_text,
    input_ended_words,
    notice_words,
    parse_answer,
    pick_words,
    quit_message,
    stop_words,
)
from blindtest.model.picks import (
    JudgeView,
    JudgingResult,
    Pick,
    Trial,
    judge_nicknames,
)
from blindtest.model.protocols import PROTOCOLS, Protocol
from blindtest.reportfmt import count

__all__ = ["Console", "InputEnded", "Session", "closing_message", "quit_message"]

FATIGUE_EVERY = 30


class _Quit(Exception):
    """The judge chose to stop (after confirming, for a fixed design)."""


class _Undo(Exception):
    """The judge takes back the last pick."""


class _Skip(Exception):
    """The judge puts the trial off, or keeps the earlier pick of a trial shown again (an
    undo, or a change from the history)."""


class _Changed(Exception):
    """The judge changed an earlier pick from the history."""

    def __init__(self, pick: Pick) -> None:
        super().__init__(pick.trial)
        self.pick = pick


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Session:
    """One sitting of one human judge, asked trial by trial by ``blindtest.judging.driver.drive``.
    Ctrl-C raises ``Interrupted`` (exit 130) and the end of input ``InputEnded`` (exit 2),
    after every completed pick has been saved."""

    def __init__(
        self,
        view: JudgeView,
        judge: str,
        console: Console,
        *,
        earlier_nicknames: tuple[str, str] | None = None,
        clock: Callable[[], str] = utc_now,
        fatigue_every: int = FATIGUE_EVERY,
        resume_command: str = "the same command",
        plain: bool = False,
        asked: Collection[int] | None = None,
    ) -> None:
        self.view = view
        self.total = view.total if asked is None else len(asked)  # a people's sample: a share
        #: The design strips formatting: responses are shown as typed, as on the page.
        self.plain = plain
        self.console = console
        self.judge_id = judge
        self.nicknames = earlier_nicknames
        self.clock = clock
        self.fatigue_every = fatigue_every
        self.resume_command = resume_command
        self._turn: Turn | None = None
        self._saved: Callable[[], JudgingResult] | None = None
        self._fatigue_at = 0
        self.asking = Asker(
            console,
            view,
            width=self._prose_width,
            beside=self._beside,
            on_quit=self._confirm_quit,
            total=self.total,
        )

    @property
    def kind(self) -> JudgeKind:
        return HUMAN

    def run(self, recorder: Recorder, remaining: Sequence[Trial]) -> JudgingResult:
        """Drive this session over ``remaining`` into ``recorder``."""
        return drive(self, recorder, remaining)

    # ----------------------------------------------------------------- the Judge protocol

    @contextmanager
    def sitting(self, progress: Callable[[], JudgingResult]) -> Iterator[None]:
        self._saved = progress
        try:
            with self.console.resizing():
                yield
        except KeyboardInterrupt:
            self.console.write("\n")  # the message goes under the ^C, not beside it
            raise Interrupted(f"interrupted; {quit_message(self.view, progress())}") from None
        except EOFError:
            self.console.write("\n")
            raise InputEnded(self._input_ended(progress())) from None

    def judge(self, turn: Turn) -> Answer:
        self._turn = turn
        try:
            if turn.first:
                self._intro()
            if self._due_a_break():
                self._fatigue()
            return (self._judge_trial(turn.trial),)
        except _Quit:
            return Stop()
        except _Undo:
            return TakeBack()
        except _Skip:
            return Skip(at=self.clock())
        except _Changed as changed:
            return Revise((changed.pick,))

    def end(self, result: JudgingResult) -> None:
        self.console.clear()

    def closing(self, result: JudgingResult, out: Path, analyze_command: str) -> str:
        return closing_message(self.view, result, analyze_command)

    # ----------------------------------------------------------------- flow

    @property
    def turn(self) -> Turn:
        assert self._turn is not None
        return self._turn

    def _due_a_break(self) -> bool:
        turn = self.turn
        if turn.correcting is not None or not turn.judged_now:
            return False
        if turn.judged_now % self.fatigue_every or self._fatigue_at == turn.judged_now:
            return False
        self._fatigue_at = turn.judged_now
        return True

    def _so_far(self) -> JudgingResult:
        assert self._saved is not None
        return self._saved()

    def _input_ended(self, result: JudgingResult) -> str:
        return input_ended_words(result, self.console.interactive, self.resume_command)

    # ----------------------------------------------------------------- prompts

    def _intro(self) -> None:
        c = self.console
        c.show(self._paint_intro)
        if c.interactive:
            while c.read_key("Press Enter to start, q to stop. ") in ("q", "Q"):
                self._confirm_quit()
            c.write("\n")

    def _paint_intro(self) -> None:
        c = self.console
        header = (
            f"blindtest {c.glyphs.sep} {self._rules.title} {c.glyphs.sep} "
            f"{count(self.total, 'trial')} {c.glyphs.sep} judge {self.judge_id}"
        )
        c.clear()
        rows = [c.bold(header), "", *self._help_rows()]
        if self.turn.judged:
            rows.append(
                f"Resuming at trial {self.turn.trial.number}: {self.turn.judged} of "
                f"{self.total} already judged."
            )
        c.write("\n".join(rows) + "\n")

    def _width(self) -> int:
        return self.console.size()[0] - 1

    def _prose_width(self) -> int:
        """Sentences are wrapped no wider than this, even on a wide screen."""
        return min(self._width(), MAX_PROSE_WIDTH)

    def _beside(self) -> bool:
        return side_by_side(self.view.protocol, self._width())

    def _fatigue(self) -> None:
        c = self.console
        c.show(self._paint_fatigue)
        while True:
            answer = c.read_key("c = continue now, q = stop for now: ").strip().lower()
            if answer in ("c", "enter", "space", ""):
                c.write("\n")
                return
            if answer == "q":
                raise _Quit
            c.write("\nType c to continue or q to stop.\n")

    def _paint_fatigue(self) -> None:
        turn = self.turn
        text = fatigue_words(turn, self.total, self.fatigue_every)
        self.console.clear()
        self.console.write("\n".join(wrap_prose_line(text, self._prose_width())) + "\n")

    def _confirm_quit(self) -> None:
        """Raise ``_Quit`` if the judge confirms; a fixed design warns that a run left
        incomplete is reported as void. Returns when the judge decides to go on."""
        if self.view.sequential:
            raise _Quit
        c = self.console
        text = stop_words(self._so_far(), self.total)
        c.write("\n" + "\n".join(wrap_prose_line(text, self._prose_width())) + "\n")
        if c.read_line("Stop now? [y/N] ").lower() in ("y", "yes"):
            raise _Quit

    # ----------------------------------------------------------------- one trial

    def _pager(self, trial: Trial, changing: Pick | None = None) -> Pager:
        return Pager(
            self.console,
            Screen(
                render=lambda width: trial_layout(
                    self.view, trial, width, self.console, self.plain, self._progress(trial)
                )
            ),
            footer=lambda width, hint: self._footer(trial, width, hint, changing),
            label=self._progress(trial),
            options=len(trial.options),
            on_quit=self._confirm_quit,
            on_help=self._show_help,
        )

    def _judge_trial(self, trial: Trial, changing: Pick | None = None) -> Pick:
        """Ask ``trial``: the trial of the turn, or (``changing``) one judged before, opened
        from the history with its answer offered again."""
        pager = self._pager(trial, changing)
        earlier = changing or self.turn.correcting
        while True:
            naming = self._named and self.nicknames is None  # chosen now, before the pick
            value = self._ask_choice(trial, pager, changing)
            reason, extras = None, {}
            if self._rules.prefers:  # a preference gives its reason and any extra answers
                reason = self.asking.reason(self._progress(trial), earlier)
                extras = self.asking.extras(earlier) if self.view.asks_extra else {}
            answered = Answered(str(value), reason, extras, self.nicknames, naming)
            made = pick_from_answer(
                self.view, trial.number, self.judge_id, answered, at=self.clock()
            )
            if isinstance(made, Pick):
                return made
            # The prompts above ask until each part is an answer, so the shared rule agrees;
            # should it not, the judge sees why and answers the trial again.
            self.console.write(f"{made.message}\n")

    def _notice(self, trial: Trial, changing: Pick | None = None) -> str:
        """A line under the question: a change or a correction under way, a trial that comes
        back after a skip, or the arbitrary first pair."""
        correcting = self.turn.correcting
        if correcting is not None and correcting.trial != trial.number:
            correcting = None
        return notice_words(
            trial.number,
            self._words_of(changing.pick) if changing is not None else None,
            self._words_of(correcting.pick) if correcting is not None else None,
            skipped=self.turn.skipped and changing is None,
            arbitrary=self._named and self.turn.judged == 0 and self.turn.judged_now == 0,
        )

    @property
    def _rules(self) -> Protocol:
        return PROTOCOLS[self.view.protocol]

    @property
    def _named(self) -> bool:
        """Whether a pick is a nickname (pair): the judge names the two models first."""
        return self._rules.pick_kind == "nickname"

    def _words_of(self, pick: int | str) -> str:
        return pick_words(self.view.protocol, pick, self._beside())

    def _question_rows(self, trial: Trial, width: int, changing: Pick | None = None) -> list[str]:
        keys = answer_keys(self.view.protocol, self.nicknames, self._beside())
        sep = self.console.glyphs.sep
        undo = ""
        if self.turn.undoable is not None and changing is None:
            undo = f" {sep} u take back trial {self.turn.undoable.trial}"
        more = ""
        if changing is None:
            history = f" {sep} h your picks" if self.turn.words else ""
            keep = "keep" if self.turn.correcting is not None else "skip"
            more = f"{history} {sep} s {keep}"
        rows = wrap_prose_line(self.view.question, width)
        notice = self._notice(trial, changing)
        if notice:
            rows += wrap_prose_line(notice, width)
        left = f"{self.turn.left} left {sep} " if changing is None else ""
        rows += wrap_prose_line(
            f"{left}{keys} {sep} v view again{undo}{more} {sep} ? help {sep} q stop", width
        )
        return rows

    def _progress(self, trial: Trial) -> str:
        if self.total == self.view.total:
            return f"trial {trial.number} of {self.total}"
        return f"trial {trial.number} ({min(self.turn.judged + 1, self.total)} of {self.total})"

    def _ask_choice(self, trial: Trial, pager: Pager, changing: Pick | None = None) -> int | str:
        hint = ""
        pager.show(start=0)
        if self._named and self.nicknames is None:
            self.nicknames = self.asking.nicknames()
            pager.redraw(None, "")
        label = f"changing trial {trial.number}" if changing else self._progress(trial)
        while True:
            answer = self.console.read_line(f"{label} > ")
            value = parse_answer(self.view.protocol, answer, self.nicknames)
            if value is not None:
                return value
            if changing is not None and answer.lower() == "s":
                raise _Skip
            start, hint = self._command(answer.lower(), trial, pager, changing)
            pager.redraw(start, hint)

    def _command(
        self, answer: str, trial: Trial, pager: Pager, changing: Pick | None = None
    ) -> tuple[int | None, str]:
        """Handle a non-answer at the question: where to redraw from, and the hint to show."""
        if answer == "q":
            self._confirm_quit()
            return None, ""
        if answer in ("u", "s", "h") and changing is None:
            return self._turn_command(answer)
        if answer == "v":
            return 0, ""
        if re.fullmatch(r"v[1-3]", answer) and int(answer[1]) <= len(trial.options):
            pager.screen.rows_for(self._width())
            return pager.screen.anchors[int(answer[1]) - 1], ""
        if answer == "b":
            page = self.console.size()[1] - 1
            return max(0, pager.screen.top - page), ""
        if answer == "?":
            self._show_help()
            return None, ""
        keys = answer_keys(self.view.protocol, self.nicknames, self._beside())
        shown = answer if len(answer) <= 12 else answer[:12] + "..."
        what = f"{shown!r} is not an answer" if answer else "an answer is needed"
        return None, f"{what}: type {keys}{self._rules.unsure}; ? for help"

    def _turn_command(self, answer: str) -> tuple[int | None, str]:
        """u, s and h: take back the last pick, put the trial off, the history."""
        if answer == "u":
            if self.turn.undoable is not None:
                raise _Undo
            return None, "there is no pick to take back: u takes back the last pick only"
        if answer == "s":
            raise _Skip
        if not self.turn.words:
            return None, "no pick yet: h lists your picks once you have made one"
        self._history()
        return 0, ""

    def _show_help(self) -> None:
        c = self.console
        c.show(self._paint_help)
        if c.interactive:
            c.read_key("\nPress any key to go back to the trial. ")
        else:
            c.write("\n")

    def _paint_help(self) -> None:
        self.console.clear()
        self.console.write("\n".join([self.console.bold("Help"), "", *self._help_rows()]))

    def _help_rows(self) -> list[str]:
        """The help, wrapped to a readable width, a blank row after each paragraph."""
        paragraphs = help_text(self.view.protocol, self.view.sequential)
        return [r for p in paragraphs for r in (*wrap_prose_line(p, self._prose_width()), "")]

    # ----------------------------------------------------------------- drawing

    def _footer(
        self, trial: Trial, width: int, hint: str, changing: Pick | None = None
    ) -> list[str]:
        return ["", *self._question_rows(trial, width, changing), fit(hint, width)]

    # ----------------------------------------------------------------- the history

    def _history(self) -> None:
        """List the picks so far and change one: its trial shown again, its answer offered.
        Returns when the judge goes back (a change raises ``_Changed``)."""
        word = self.asking.word_to_change(self.turn.words, self._words_of)
        if word is None:
            return
        try:
            pick = self._judge_trial(self.view.trials[word.trial - 1], word)
        except _Skip:
            return
        raise _Changed(pick)


def _make(setup: JudgeSetup) -> Judge:
    return Session(
        setup.run.view,
        setup.judge_id,
        Console(),
        earlier_nicknames=judge_nicknames(setup.earlier.picks, setup.judge_id),
        resume_command=setup.resume_command,
        plain=bool(setup.run.design["normalization"]["strip_formatting"]),
        asked=setup.share,
    )


HUMAN = JudgeKind("human", "human", _make)


def judge_kind(name: str) -> JudgeKind:
    return HUMAN
