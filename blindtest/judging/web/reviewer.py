"""One reviewer on the judging page: the trial the driver asks now, the answer the page
sends, the break screen and the end. Shared between the driver's thread (``WebJudge.judge``
waits here for an answer) and the server's thread (a POST hands one in); a condition variable
guards it. No socket here.

A pick is taken once, from the screen it was made on: every page the driver's turn is shown
on carries that turn's mark (``Screen.mark``: this start's random prefix and the turn's
number, counting every trial asked, a trial asked again after a take-back included), and its
forms send it back. A pick or a take-back whose mark is not the turn asked now, or that
arrives while an answer to that turn is already on its way to the picks file, changes nothing
(a double-clicked button, a resent form, a stale tab, a page from before a restart). So a pick
and a take-back of the same reviewer are ordered: whichever the server reads first answers the
turn, and the other names a turn that is no longer asked, so a take-back never takes back a
pick its page did not show. A pick sent again from a page of before a restart (kept by the page
while the server was away) is taken for the trial asked now when that is the trial it names and
nothing is being changed there: the turn counter of a process that stopped names no turn, but
the trial does, and the pick's id (made by the page) keeps it from being recorded twice
(:meth:`Reviewer.recorded`). A change of an earlier pick, from the history, names its trial and
carries the whole new answer, so it needs no mark: it is taken while any turn is asked.
What a reviewer sends is read here and made
a ``Pick`` by the rule the terminal shares (``blindtest.judging.answers``); the recorder checks
it again against the design. Taking back the last pick
(the page's Undo, the terminal's ``u``) is an answer too: ``TakeBack``, which the driver
turns into that trial asked again, its new pick appended with ``correction: true``.
"""

from __future__ import annotations

import hmac
import re
import secrets
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from blindtest.judging.answers import Answered, Refusal, pick_from_answer
from blindtest.judging.driver import JudgingResult, Revise, Skip, TakeBack, Turn
from blindtest.judging.web.links import token_hash
from blindtest.model.picks import OPTION_ANSWER_KEYS, JudgeView, Pick, clean_text
from blindtest.model.protocols import PROTOCOLS

#: How long a page request waits for the driver to draw the next trial before it says so.
READY_WAIT = 10.0
#: What a pick id the page makes looks like (the picks schema's ``pick_id``); any other is
#: dropped, never recorded.
PICK_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True, slots=True)
class Refused:
    """An answer the page must ask again for, with the reason shown above the form."""

    message: str
    form: Mapping[str, str]
    #: What the message is about, so the page says it next to that: "pick", "reason", or
    #: an extra question's words (None: the answer as a whole).
    field: str | None = None


@dataclass(frozen=True, slots=True)
class Screen:
    """What a reviewer's page shows now: a trial, the break screen, the end, or a wait."""

    kind: str  # "trial" | "break" | "done" | "waiting"
    turn: Turn | None = None
    result: JudgingResult | None = None
    judged_now: int = 0
    #: The turn's mark, which the page's forms send back ("" when no turn is shown).
    mark: str = ""


class Reviewer:
    """The state one reviewer's page and one driver share."""

    def __init__(
        self,
        view: JudgeView,
        judge_id: str,
        token: str,
        *,
        nicknames: tuple[str, str] | None = None,
        session_cap: int = 30,
        total: int | None = None,
        clock: Callable[[], str] = utc_now,
        earlier_links: Iterable[str] = (),
        pick_ids: Iterable[str] = (),
    ) -> None:
        self.view = view
        self.judge_id = judge_id
        self.token = token
        #: The SHA-256 of every token this reviewer may open the page with: this start's
        #: and the links printed before (``RUN/web-links.jsonl``); never a token itself.
        self.token_hashes = (token_hash(token), *dict.fromkeys(earlier_links))
        #: Set once the end screen's stylesheet has been served: the end shows as it should.
        self.end_served = threading.Event()
        self.nicknames = nicknames
        self.session_cap = session_cap
        #: How many trials this reviewer judges (a panel member's share; else all).
        self.total = total if total is not None else view.total
        self.clock = clock
        self._cond = threading.Condition()
        self._turn: Turn | None = None
        self._answer: Pick | TakeBack | Skip | Revise | None = None
        #: The pick ids this judge has recorded (the file's, and those handed on since).
        self._ids = set(pick_ids)
        self._result: JudgingResult | None = None
        self._on_break = False
        self._break_at = 0
        self._version = 0  # grows each time the screen changes
        self._stopped = False
        self._asked = False  # a trial was shown by this process: its end screen is due
        self._start = secrets.token_hex(4)  # a page from before a restart names no turn here
        self._turns = 0  # turns asked by this process

    # ------------------------------------------------------------------ the driver's side

    def ask(
        self, turn: Turn, interrupted: Callable[[], None] = lambda: None
    ) -> Pick | TakeBack | Skip | Revise | None:
        """Show ``turn`` and wait for the reviewer's pick, or ``TakeBack`` when the reviewer
        takes back the last pick, ``Skip`` when it puts the trial off, ``Revise`` when it
        changes an earlier pick (None when the server stops)."""
        with self._cond:
            self._turn, self._answer, self._asked = turn, None, True
            self._turns += 1
            judged = turn.judged_now
            if judged and judged % self.session_cap == 0 and self._break_at != judged:
                self._break_at, self._on_break = judged, True
            self._changed()
            while self._answer is None and not self._stopped:
                self._cond.wait(0.2)  # short waits: Ctrl-C reaches the main thread
                interrupted()
            answer, self._turn, self._answer = self._answer, None, None
            return answer

    def finish(self, result: JudgingResult) -> None:
        """The sitting is over (called again with the same result, nothing changes)."""
        with self._cond:
            self._result, self._turn = result, None
            self._changed()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._changed()

    def opens_with(self, token: str) -> bool:
        """Whether ``token`` opens this reviewer's page (every hash compared, each in constant
        time)."""
        given = token_hash(token).encode()
        found = False
        for known in self.token_hashes:
            found |= hmac.compare_digest(known.encode(), given)
        return found

    def _changed(self) -> None:
        self._version += 1
        self._cond.notify_all()

    # ------------------------------------------------------------------ the page's side

    def screen(self, wait: float = READY_WAIT) -> Screen:
        """What the page shows now; waits up to ``wait`` seconds for the driver to draw a
        trial (between trials, or with an answer on its way to the picks file)."""
        with self._cond:
            self._cond.wait_for(self._drawn, timeout=wait)
            if self._result is not None:
                return Screen("done", result=self._result)
            if self._turn is None or self._answer is not None:  # the driver is slow to draw
                return Screen("waiting")
            if self._on_break:
                return Screen("break", turn=self._turn, judged_now=self._break_at)
            return Screen("trial", turn=self._turn, mark=self._mark())

    def _drawn(self) -> bool:
        """A screen to show: a trial waiting for its answer, the end, or the server stopped."""
        waiting = self._turn is not None and self._answer is None
        return waiting or self._result is not None or self._stopped

    def _mark(self) -> str:
        return f"{self._start}-{self._turns}"

    def _asked_now(self, form: Mapping[str, str], *, kept: bool = False) -> Turn | None:
        """The turn asked now when ``form`` was sent from its page and nothing answered it
        yet, else None. ``kept``: a pick the page kept while the server was away is also
        taken from a page of before a restart (a mark of another start) when it names the
        trial asked now and nothing is being changed there."""
        turn = self._turn
        if turn is None or self._answer is not None or self._on_break:
            return None
        if form.get("trial", "") != str(turn.trial.number):
            return None
        mark = form.get("mark", "")
        if hmac.compare_digest(mark, self._mark()):
            return turn
        before = mark.partition("-")[0] not in ("", self._start)
        return turn if kept and before and turn.correcting is None else None

    def recorded(self, pick_id: str) -> bool:
        """Whether a pick with this id was recorded already (sent again, its reply lost):
        the page is told it is saved, and nothing is recorded twice."""
        with self._cond:
            return pick_id in self._ids

    def words(self, wait: float = READY_WAIT) -> tuple[Pick, ...] | None:
        """This reviewer's history to show and change (its last word on each trial judged,
        in the order judged), or None when no trial is asked (the sitting is over)."""
        with self._cond:
            self._cond.wait_for(self._drawn, timeout=wait)
            if self._turn is None or self._result is not None:
                return None
            return tuple(self._turn.words)

    def resume(self) -> None:
        """The reviewer leaves the break screen."""
        with self._cond:
            self._on_break = False
            self._changed()

    def submit(self, form: Mapping[str, str]) -> Refused | int | None:
        """Take the pick a form sends: for the turn asked now, or (``change``: a trial
        number) a new answer to a trial judged before. Returns the screen version to wait
        past once the answer is handed to the driver, None when the form changes nothing (not
        from the page of the turn asked now, that turn already answered, or a change of a
        trial this reviewer has not judged), or ``Refused`` when the form must be filled
        again."""
        if form.get("change"):
            return self._change(form)
        with self._cond:
            # A pick the page kept while bt-judge was away can arrive as soon as the restarted
            # server listens, before its driver asks the first trial: judged then, it named no
            # turn and the page, told it was stale, let it go.
            self._cond.wait_for(self._drawn, timeout=READY_WAIT)
            turn = self._asked_now(form, kept=bool(form.get("pick_id")))
            if turn is None:
                return None
            made = self._pick(turn.trial.number, form)
            if isinstance(made, Refused):
                return made
            return self._hand(made, made.pick_id)

    def _change(self, form: Mapping[str, str]) -> Refused | int | None:
        with self._cond:
            self._cond.wait_for(self._drawn, timeout=READY_WAIT)
            turn = self._turn
            if turn is None or self._answer is not None or self._result is not None:
                return None
            number = form.get("change", "")
            if not any(str(word.trial) == number for word in turn.words):
                return None
            made = self._pick(int(number), form)
            if isinstance(made, Refused):
                return made
            if turn.correcting is not None and turn.correcting.trial == made.trial:
                return self._hand(made, made.pick_id)  # the trial shown again: its answer
            return self._hand(Revise((made,)), made.pick_id)

    def skip(self, form: Mapping[str, str]) -> int | None:
        """Put the trial asked now off (or, shown again to be changed, keep its earlier
        pick), from the page of that turn. Returns the screen version to wait past, or None
        when the form changes nothing."""
        with self._cond:
            turn = self._asked_now(form)
            if turn is None:
                return None
            return self._hand(Skip(at=self.clock()), None)

    def _hand(self, answer: Pick | TakeBack | Skip | Revise, pick_id: str | None) -> int:
        """Give the driver ``answer`` (the lock held); the version to wait past."""
        if pick_id is not None:
            self._ids.add(pick_id)
        self._answer = answer
        self._changed()
        return self._version

    def take_back(self, form: Mapping[str, str]) -> int | None:
        """Take back the last pick (``Turn.undoable``) from the page of the turn asked now.
        Returns the screen version to wait past, or None when there is nothing to take back
        from that page (a stale tab, a second click, a pick or take-back already on its way)."""
        with self._cond:
            turn = self._asked_now(form)
            if turn is None or turn.undoable is None:
                return None
            return self._hand(TakeBack(), None)

    @property
    def asked(self) -> bool:
        """A trial was shown to this reviewer since the page started."""
        with self._cond:
            return self._asked

    @property
    def ended(self) -> bool:
        """The sitting is over and the page shows its end."""
        with self._cond:
            return self._result is not None

    def wait_past(self, version: int, wait: float = READY_WAIT) -> None:
        """Wait until the driver has taken the answer and drawn what comes next."""
        with self._cond:
            self._cond.wait_for(lambda: self._version > version and self._drawn(), timeout=wait)

    # ------------------------------------------------------------------ reading a form

    def _pick(self, trial: int, form: Mapping[str, str]) -> Pick | Refused:
        """The form read into what the reviewer answered on ``trial``, made a pick by the
        rule the terminal shares (``blindtest.judging.answers``), with the page's pick id."""
        nicknames = self.nicknames
        naming = nicknames is None and PROTOCOLS[self.view.protocol].pick_kind == "nickname"
        if naming:  # the first pick: the form carries the nicknames chosen with it
            first = clean_text(form.get("nick1", "")).strip()
            nicknames = (first, clean_text(form.get("nick2", "")).strip())
        said = self._extras(form)
        answered = Answered(form.get("pick", ""), form.get("reason"), said, nicknames, naming)
        made = pick_from_answer(self.view, trial, self.judge_id, answered, at=self.clock())
        if isinstance(made, Refusal):
            return Refused(made.message, form, made.field)
        pick_id = form.get("pick_id", "")
        if PICK_ID.fullmatch(pick_id):
            made = replace(made, pick_id=pick_id)
        if made.nicknames is not None:
            self.nicknames = made.nicknames  # chosen with the first pick, kept from then on
        return made

    def _extras(self, form: Mapping[str, str]) -> dict[str, Mapping[str, str] | str]:
        """The extra questions' answers as the form sends them: ``e{i}-left`` and
        ``e{i}-right`` for the i-th question asked of each option, ``q{i}`` for the i-th asked
        once per comparison; each "yes" or "no" (the shared rule refuses anything else)."""
        said: dict[str, Mapping[str, str] | str] = {}
        for i, question in enumerate(self.view.extra_questions_per_option, start=1):
            said[question] = {name: form.get(f"e{i}-{name}", "") for name in OPTION_ANSWER_KEYS}
        for i, question in enumerate(self.view.extra_questions, start=1):
            said[question] = form.get(f"q{i}", "")
        return said
