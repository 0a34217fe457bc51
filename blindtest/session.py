"""The interactive judging session in a terminal, for a human judge.

It owns the screen: text sanitized and wrapped to the terminal width (code blocks and tables
never re-flowed), a small pager for trials taller than the terminal, the questions and keys
of each protocol, the fatigue prompt, and the quit / resume / end messages.

It must never show anything that depends on the arrangement: it gets a ``JudgeView`` (the
blinded trials and the question) and a ``Recorder`` from ``blindtest.judge``, and learns only
"go on" or "stop". No score, no correctness, no e-value and no timing is shown. Every pick is
appended (by the recorder) before the next trial is drawn, so quitting in any way keeps it.

No curses: plain reads and writes, and termios only to read single keys in the pager when
stdin is a terminal. When stdin is not a terminal, answers are read line by line, so a session
can be scripted.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import sys
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TextIO

from blindtest.errors import Interrupted
from blindtest.judge import PREFERENCE_PICKS, JudgeView, Pick, Recorder, Trial
from blindtest.normalize import classify_lines, is_table_delimiter

FATIGUE_EVERY = 30
#: Prose is wrapped at most this wide even on wide terminals: long lines are hard to read.
MAX_PROSE_WIDTH = 110
MIN_WIDTH = 24
MIN_HEIGHT = 8

# --------------------------------------------------------------------------- text layout

_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_LIST_PREFIX = re.compile(r"^(\s*(?:[-*+]|\d{1,3}[.)]|>+)?\s*)")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True, slots=True)
class Glyphs:
    rule: str
    bar: str
    more: str
    sep: str


UNICODE_GLYPHS = Glyphs(rule="─", bar="│", more="↪", sep="·")
ASCII_GLYPHS = Glyphs(rule="-", bar="|", more=">", sep="-")


def sanitize(text: str) -> str:
    """Make model output safe to print: control characters (escape sequences that could
    repaint the screen) and bidi overrides (which reorder what is shown) become visible."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out = []
    for ch in text:
        if ch in "\n\t":
            out.append(ch)
        elif unicodedata.category(ch) == "Cc" or ch in _BIDI_CONTROLS:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def char_width(ch: str) -> int:
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def display_width(text: str) -> int:
    return sum(char_width(ch) for ch in text)


def _take(text: str, width: int) -> tuple[str, str]:
    """Split ``text`` after at most ``width`` columns (at least one character, to progress)."""
    used = 0
    for index, ch in enumerate(text):
        used += char_width(ch)
        if used > width and index > 0:
            return text[:index], text[index:]
    return text, ""


def split_code_line(line: str, width: int, more: str) -> list[str]:
    """A code or table line is never re-flowed; one wider than the screen is cut at the edge
    and continued on marked rows, so the pager's row count stays exact."""
    head, rest = _take(line, width)
    rows = [head]
    while rest:
        piece, rest = _take(rest, max(1, width - 1))
        rows.append(more + piece)
    return rows


def wrap_prose_line(line: str, width: int) -> list[str]:
    """Word-wrap one prose line, keeping its indentation and list marker as a hanging indent."""
    if display_width(line) <= width:
        return [line]
    prefix = _LIST_PREFIX.match(line)
    lead = prefix.group(1) if prefix else ""
    if display_width(lead) >= width // 2:
        lead = ""  # a very deep indent on a narrow screen: keep the words, drop the indent
    hang = " " * display_width(lead)
    rows: list[str] = []
    current, filled = lead, False
    for word in line[len(lead) :].split():
        if filled and display_width(current) + 1 + display_width(word) <= width:
            current += " " + word
            continue
        if filled:
            rows.append(current)
            current = hang
        while display_width(current) + display_width(word) > width:
            piece, word = _take(word, max(1, width - display_width(current)))
            rows.append(current + piece)
            current = hang
        current += word
        filled = True
    rows.append(current)
    return rows


def _is_table_row(body: str) -> bool:
    # Tables lose their meaning when re-flowed.
    return body.lstrip().startswith("|") or is_table_delimiter(body)


def render_text(text: str, width: int, code_width: int, more: str) -> list[str]:
    """Rows for a markdown-ish text: every source line kept (never joined), prose wrapped to
    ``width``; code (as ``blindtest.normalize`` defines it) and tables kept verbatim, cut only
    at ``code_width``."""
    rows: list[str] = []
    for line in classify_lines(sanitize(text)):
        body = line.body.expandtabs(4).rstrip()
        if line.kind == "code" or _is_table_row(body):
            rows.extend(split_code_line(body, code_width, more))
        else:
            rows.extend(wrap_prose_line(body, width))
    while rows and not rows[-1]:
        rows.pop()
    return rows


# --------------------------------------------------------------------------- protocol wording


def option_labels(protocol: str) -> tuple[tuple[str, str], ...]:
    """(header, gutter) for each option in display order."""
    if protocol == "preference":
        return (("Left", "L"), ("Right", "R"))
    if protocol == "pair":
        return (("Option 1", "1"), ("Option 2", "2"))
    return (("1", "1"), ("2", "2"), ("3", "3"))


def answer_keys(protocol: str, nicknames: tuple[str, str] | None) -> str:
    if protocol == "preference":
        return "l = left, r = right, t = tie"
    if protocol == "pair" and nicknames is not None:
        return f"1 = {nicknames[0]}, 2 = {nicknames[1]} (or type the nickname)"
    return "1, 2 or 3"


def parse_answer(protocol: str, text: str, nicknames: tuple[str, str] | None) -> int | str | None:
    """The pick an answer stands for, or None when it is not an answer."""
    answer = text.strip().lower()
    if protocol == "triangle":
        return int(answer) if answer in ("1", "2", "3") else None
    if protocol == "preference":
        words = {"l": "left", "r": "right", "t": "tie"}
        return words.get(answer, answer if answer in PREFERENCE_PICKS else None)
    if nicknames is None:
        return None
    choices = {"1": nicknames[0], "2": nicknames[1]}
    choices.update({name.lower(): name for name in nicknames})
    return choices.get(answer)


#: Words a nickname may not be, because they are keys or preference answers.
RESERVED_NICKNAMES = frozenset({"1", "2", "3", "q", "v", "b", "?", *PREFERENCE_PICKS})


def nickname_problem(name: str, other: str | None) -> str | None:
    if not name:
        return "a nickname cannot be empty"
    if name.lower() in RESERVED_NICKNAMES:
        return f"{name!r} is a key in this session; choose a word such as fox or owl"
    if len(name) > 24:
        return "keep a nickname to 24 characters or fewer"
    if other is not None and name.lower() == other.lower():
        return "the two nicknames must differ"
    return None


def help_text(protocol: str, sequential: bool) -> list[str]:
    task = {
        "triangle": "Two of the three responses come from one model and one from the other. "
        "Pick the one that is different. If you are unsure, guess: every trial needs an "
        "answer, and guesses are priced into the analysis.",
        "pair": "Option 1 and option 2 come from different models. Say which of your two "
        "nicknames belongs to option 1. What is scored is whether you are consistent.",
        "preference": "Say which response you would rather use, or t for a tie, then give a "
        "one-line reason.",
    }[protocol]
    stop = (
        "This design may end before the last trial: it stops by itself when the evidence is "
        "enough, and it tells you nothing else until the end."
        if sequential
        else "You get no feedback until the end."
    )
    return [
        task,
        stop,
        "Reading: when a trial is longer than the screen, space or Enter shows more, b goes "
        "back, g goes to the top. At a question: v shows the trial again, b the page before.",
        "q stops the session. Every answer given so far is saved; running the same command "
        "again continues at the first trial you have not judged. Ctrl-C stops too.",
        "Lines that start with a continuation mark were cut at the screen edge: code is "
        "never re-wrapped.",
    ]


# --------------------------------------------------------------------------- the terminal


class Console:
    """The terminal: writes, line reads, single-key reads (on a terminal) and the size.

    When stdin is not a terminal every read takes one line, so a session can be scripted.
    """

    def __init__(
        self,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        *,
        interactive: bool | None = None,
    ) -> None:
        self.stdin = stdin if stdin is not None else sys.stdin
        self.stdout = stdout if stdout is not None else sys.stdout
        if interactive is None:
            interactive = _isatty(self.stdin) and _isatty(self.stdout)
        self.interactive = interactive
        encoding = (getattr(self.stdout, "encoding", None) or "utf-8").lower().replace("-", "")
        self.glyphs = UNICODE_GLYPHS if encoding in ("utf8", "utf_8") else ASCII_GLYPHS

    def size(self) -> tuple[int, int]:
        columns, lines = shutil.get_terminal_size()
        return max(columns, MIN_WIDTH), max(lines, MIN_HEIGHT)

    def write(self, text: str) -> None:
        try:
            self.stdout.write(text)
        except UnicodeEncodeError:
            encoding = getattr(self.stdout, "encoding", None) or "ascii"
            self.stdout.write(text.encode(encoding, "replace").decode(encoding))
        self.stdout.flush()

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self.interactive else text

    def clear(self) -> None:
        if self.interactive:
            self.write("\x1b[H\x1b[2J")

    def read_line(self, prompt: str) -> str:
        """One line without its newline; EOFError at end of input or a closed terminal."""
        self.write(prompt)
        if self.interactive:
            return _read_tty_line(self.stdin.fileno())
        line = self.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\r\n")

    def read_key(self, prompt: str) -> str:
        """One key on a terminal (space, enter, letters, named arrows); a line otherwise."""
        if not self.interactive:
            return self.read_line(prompt)
        self.write(prompt)
        return _read_tty_key(self.stdin.fileno())


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _read_tty_line(fd: int) -> str:
    # os.read, not input(): the same unbuffered descriptor serves single-key reads, so no
    # keystroke is lost in a Python-side buffer between the two modes.
    data = b""
    while not data.endswith(b"\n"):
        chunk = _read_tty(fd, 4096)
        if not chunk:
            if data:
                break  # Ctrl-D after some text: that text is the line, as with input()
            raise EOFError
        data += chunk
    return data.decode("utf-8", errors="replace").rstrip("\r\n")


def _read_tty(fd: int, size: int) -> bytes:
    try:
        return os.read(fd, size)
    except OSError as error:
        if error.errno == errno.EIO:  # the terminal went away: the same as end of input
            raise EOFError from None
        raise


_KEY_NAMES = {
    "\x1b[A": "up",
    "\x1bOA": "up",
    "\x1b[B": "down",
    "\x1bOB": "down",
    "\x1b[5~": "pgup",
    "\x1b[6~": "pgdn",
    "\x1b[H": "home",
    "\x1bOH": "home",
    "\x1b[1~": "home",
    "\x1b[F": "end",
    "\x1bOF": "end",
    "\x1b[4~": "end",
    "\r": "enter",
    "\n": "enter",
    " ": "space",
}


@contextmanager
def _cbreak(fd: int) -> Iterator[None]:
    import termios
    import tty

    saved = termios.tcgetattr(fd)
    try:
        # cbreak keeps ISIG, so Ctrl-C still raises KeyboardInterrupt; TCSANOW rather than the
        # default TCSAFLUSH, which would throw away keys typed ahead.
        tty.setcbreak(fd, termios.TCSANOW)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def _read_tty_key(fd: int) -> str:
    with _cbreak(fd):
        data = _read_tty(fd, 16)
    if not data or data == b"\x04":
        raise EOFError
    if data == b"\x03":
        raise KeyboardInterrupt
    text = data.decode("utf-8", errors="replace")
    return _KEY_NAMES.get(text, text[:1] if not text.startswith("\x1b") else "escape")


# --------------------------------------------------------------------------- the session


class _Quit(Exception):
    """The judge chose to stop (after confirming, for a fixed design)."""


@dataclass(frozen=True, slots=True)
class SessionResult:
    """How a session ended: "complete", "stopped" (sequential rule met) or "quit"."""

    status: str
    judged: int
    total: int
    judged_now: int
    next_trial: int | None


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class _Screen:
    """One trial's rows and where the pager stands, re-rendered when the width changes."""

    render: Callable[[int], list[str]]
    width: int = 0
    rows: list[str] = field(default_factory=list)
    top: int = 0

    def rows_for(self, width: int) -> list[str]:
        if width != self.width:
            self.width, self.rows = width, self.render(width)
        return self.rows


class Session:
    """One sitting of one human judge. ``run`` returns how it ended, or raises ``Interrupted``
    (exit 130) on Ctrl-C or end of input, after every completed pick has been saved."""

    def __init__(
        self,
        view: JudgeView,
        recorder: Recorder,
        console: Console,
        *,
        earlier_nicknames: tuple[str, str] | None = None,
        clock: Callable[[], str] = utc_now,
        fatigue_every: int = FATIGUE_EVERY,
    ) -> None:
        self.view = view
        self.recorder = recorder
        self.console = console
        self.judge = recorder.judge
        self.nicknames = earlier_nicknames
        self.clock = clock
        self.fatigue_every = fatigue_every
        self.judged_now = 0
        self.remaining: list[Trial] = []

    # ----------------------------------------------------------------- flow

    def run(self, remaining: Sequence[Trial]) -> SessionResult:
        self.remaining = list(remaining)
        try:
            return self._run()
        except _Quit:
            return self._result("quit")
        except KeyboardInterrupt:
            self.console.write("\n")  # the message goes under the ^C, not beside it
            raise Interrupted(self._interrupted("interrupted")) from None
        except EOFError:
            self.console.write("\n")
            raise Interrupted(self._interrupted("input ended")) from None

    def _run(self) -> SessionResult:
        if self.recorder.done:
            return self._result("stopped" if self.recorder.stopped_early else "complete")
        self._intro()
        if self.view.protocol == "pair" and self.nicknames is None:
            self.nicknames = self._ask_nicknames()
        while self.remaining:
            trial = self.remaining[0]
            if self.judged_now and self.judged_now % self.fatigue_every == 0:
                self._fatigue()
            pick = self._judge_trial(trial)
            self.remaining.pop(0)
            self.judged_now += 1
            if self.recorder.record(pick):
                break
        self.console.clear()
        return self._result("stopped" if self.recorder.stopped_early else "complete")

    def _result(self, status: str) -> SessionResult:
        return SessionResult(
            status=status,
            judged=self.recorder.judged,
            total=self.view.total,
            judged_now=self.judged_now,
            next_trial=self.remaining[0].number if self.remaining else None,
        )

    def _interrupted(self, what: str) -> str:
        result = self._result("quit")
        return f"{what}; {quit_message(self.view, result)}"

    # ----------------------------------------------------------------- prompts

    def _intro(self) -> None:
        c = self.console
        kind = {"triangle": "triangle test", "pair": "pair test", "preference": "preference"}
        header = (
            f"blindtest {c.glyphs.sep} {kind[self.view.protocol]} {c.glyphs.sep} "
            f"{self.view.total} trials {c.glyphs.sep} judge {self.judge}"
        )
        c.clear()
        width = self._width()
        rows = [c.bold(header), ""]
        for paragraph in help_text(self.view.protocol, self.view.sequential):
            rows.extend([*wrap_prose_line(paragraph, width), ""])
        if self.recorder.judged:
            rows.append(
                f"Resuming at trial {self.remaining[0].number}: {self.recorder.judged} of "
                f"{self.view.total} already judged."
            )
        c.write("\n".join(rows) + "\n")
        if c.interactive:
            while c.read_key("Press Enter to start, q to stop. ") in ("q", "Q"):
                self._confirm_quit()
            c.write("\n")

    def _width(self) -> int:
        return self.console.size()[0] - 1

    def _ask_nicknames(self) -> tuple[str, str]:
        c = self.console
        c.write(
            "\n".join(
                wrap_prose_line(
                    "Give the two models nicknames now: short words you will recognise, such "
                    "as fox and owl. Each trial, you say which nickname option 1 carries. "
                    "Keep them consistent: consistency is what is scored.",
                    self._width(),
                )
            )
            + "\n"
        )
        first = self._ask_nickname("First nickname: ", None)
        second = self._ask_nickname("Second nickname: ", first)
        return first, second

    def _ask_nickname(self, prompt: str, other: str | None) -> str:
        while True:
            name = self.console.read_line(prompt).strip()
            if name.lower() == "q":
                self._confirm_quit()
                continue
            problem = nickname_problem(name, other)
            if problem is None:
                return name
            self.console.write(f"{problem}\n")

    def _fatigue(self) -> None:
        c = self.console
        c.clear()
        text = (
            f"You have judged {self.judged_now} trials in this sitting. Judgement gets worse "
            f"after about {self.fatigue_every} comparisons in a row: consider stopping now and "
            "resuming later. Your picks are saved, and running the same command again "
            f"continues at trial {self.remaining[0].number}."
        )
        c.write("\n".join(wrap_prose_line(text, self._width())) + "\n")
        while True:
            answer = c.read_key("c = continue now, q = stop for now: ").strip().lower()
            if answer in ("c", "enter", "space", ""):
                c.write("\n")
                return
            if answer == "q":
                raise _Quit
            c.write("\nType c to continue or q to stop.\n")

    def _confirm_quit(self) -> None:
        """Raise ``_Quit`` if the judge confirms; a fixed design warns that a run left
        incomplete is reported as void. Returns when the judge decides to go on."""
        if self.view.sequential:
            raise _Quit
        c = self.console
        next_trial = self.remaining[0].number if self.remaining else self.view.total
        text = (
            f"Stop now? {self.recorder.judged} of {self.view.total} trials are judged and "
            "saved. This design has a fixed number of trials: if it is never finished, the "
            "analysis reports the run as void. Run the same command again later to continue "
            f"at trial {next_trial}."
        )
        c.write("\n" + "\n".join(wrap_prose_line(text, self._width())) + "\n")
        if c.read_line("Stop now? [y/N] ").strip().lower() in ("y", "yes"):
            raise _Quit

    # ----------------------------------------------------------------- one trial

    def _judge_trial(self, trial: Trial) -> Pick:
        screen = _Screen(render=lambda width: trial_rows(self.view, trial, width, self.console))
        value = self._ask_choice(trial, screen)
        reason = answers = None
        if self.view.protocol == "preference":
            reason = self._ask_reason(trial)
            answers = self._ask_extras() if self.view.extra_questions else None
        return Pick(
            trial=trial.number,
            judge=self.judge,
            pick=value,
            reason=reason,
            at=self.clock(),
            nicknames=self.nicknames if self.view.protocol == "pair" else None,
            answers=answers,
        )

    def _question_rows(self, width: int) -> list[str]:
        keys = answer_keys(self.view.protocol, self.nicknames)
        sep = self.console.glyphs.sep
        rows = wrap_prose_line(self.view.question, width)
        rows += wrap_prose_line(f"{keys} {sep} v view again {sep} ? help {sep} q stop", width)
        return rows

    def _progress(self, trial: Trial) -> str:
        return f"trial {trial.number} of {self.view.total}"

    def _ask_choice(self, trial: Trial, screen: _Screen) -> int | str:
        hint = ""
        self._show(trial, screen, start=0)
        while True:
            answer = self.console.read_line(f"{self._progress(trial)} > ")
            value = parse_answer(self.view.protocol, answer, self.nicknames)
            if value is not None:
                return value
            start, hint = self._command(answer.strip().lower(), trial, screen)
            self._redraw(trial, screen, start, hint)

    def _command(self, answer: str, trial: Trial, screen: _Screen) -> tuple[int | None, str]:
        """Handle a non-answer at the question: where to redraw from, and the hint to show."""
        if answer == "q":
            self._confirm_quit()
            return None, ""
        if answer == "v":
            return 0, ""
        if answer == "b":
            page = self.console.size()[1] - 1
            return max(0, screen.top - page), ""
        if answer == "?":
            self._show_help()
            return None, ""
        keys = answer_keys(self.view.protocol, self.nicknames)
        shown = answer if len(answer) <= 12 else answer[:12] + "..."
        what = f"{shown!r} is not an answer" if answer else "an answer is needed"
        unsure = "; guess if unsure" if self.view.protocol == "triangle" else ""
        return None, f"{what}: type {keys}{unsure}; ? for help"

    def _redraw(self, trial: Trial, screen: _Screen, start: int | None, hint: str) -> None:
        if start is not None:
            self._show(trial, screen, start=start, hint=hint)
        elif self.console.interactive:
            self._draw_last(trial, screen, hint)
        else:
            self._write_footer(hint)

    def _show_help(self) -> None:
        c = self.console
        width = self._width()
        c.clear()
        rows: list[str] = [c.bold("Help"), ""]
        for paragraph in help_text(self.view.protocol, self.view.sequential):
            rows.extend([*wrap_prose_line(paragraph, width), ""])
        c.write("\n".join(rows))
        if c.interactive:
            c.read_key("\nPress any key to go back to the trial. ")
        else:
            c.write("\n")

    def _ask_reason(self, trial: Trial) -> str | None:
        need = self.view.require_reason
        prompt = "Reason, one line" + (": " if need else " (Enter to skip): ")
        while True:
            reason = self.console.read_line(prompt).strip()
            if reason.lower() == "q":
                self._confirm_quit()
                continue
            if reason:
                return reason
            if not need:
                return None
            self.console.write(f"A one-line reason is needed ({self._progress(trial)}).\n")

    def _ask_extras(self) -> dict[str, bool]:
        answers: dict[str, bool] = {}
        for question in self.view.extra_questions:
            while True:
                text = self.console.read_line(f"{question} [y/n] ").strip().lower()
                if text in ("y", "yes", "n", "no"):
                    answers[question] = text.startswith("y")
                    break
                if text == "q":
                    self._confirm_quit()
                    continue
                self.console.write("Type y or n.\n")
        return answers

    # ----------------------------------------------------------------- drawing and paging

    def _footer(self, width: int, hint: str) -> list[str]:
        rows = ["", *self._question_rows(width)]
        rows.append(_fit(hint, width))
        return rows

    def _write_footer(self, hint: str) -> None:
        self.console.write("\n".join(self._footer(self._width(), hint)) + "\n")

    def _show(self, trial: Trial, screen: _Screen, *, start: int, hint: str = "") -> None:
        """Show the trial from row ``start``: all at once when it fits, else page by page
        until its last page, which is drawn with the question under it."""
        c = self.console
        if not c.interactive:
            rows = screen.rows_for(self._width())
            c.write("\n" + "\n".join(rows[start:]) + "\n")
            self._write_footer(hint)
            return
        screen.top = start
        while True:
            columns, lines = c.size()
            rows = screen.rows_for(columns - 1)
            body = max(1, lines - len(self._footer(columns - 1, hint)) - 1)
            last_top = max(0, len(rows) - body)
            if screen.top >= last_top:
                screen.top = last_top
                self._draw_last(trial, screen, hint)
                return
            self._page(trial, screen, rows, lines - 1, last_top)

    def _draw_last(self, trial: Trial, screen: _Screen, hint: str) -> None:
        c = self.console
        width = self._width()
        rows = screen.rows_for(width)
        c.clear()
        c.write("\n".join(rows[screen.top :]) + "\n")
        c.write("\n".join(self._footer(width, hint)) + "\n")

    def _page(
        self, trial: Trial, screen: _Screen, rows: list[str], page: int, last_top: int
    ) -> None:
        """Draw one page above a status line and move ``screen.top`` by the key pressed."""
        c = self.console
        top = screen.top
        c.clear()
        c.write("\n".join(rows[top : top + page]) + "\n")
        sep = c.glyphs.sep
        status = (
            f"-- {self._progress(trial)} {sep} rows {top + 1}-{min(top + page, len(rows))} of "
            f"{len(rows)} {sep} space/Enter more {sep} b back {sep} q stop --"
        )
        key = c.read_key(c.bold(_fit(status, c.size()[0] - 1)))
        if key in ("space", "enter", "down", "pgdn", "j", "f"):
            screen.top = min(top + page, last_top)
        elif key in ("b", "up", "pgup", "k"):
            screen.top = max(0, top - page)
        elif key in ("g", "home"):
            screen.top = 0
        elif key in ("G", "end"):
            screen.top = last_top
        elif key in ("q", "Q"):
            self._confirm_quit()
        elif key == "?":
            self._show_help()


def _fit(text: str, width: int) -> str:
    if display_width(text) <= width:
        return text
    head, _ = _take(text, max(1, width - 3))
    return head + "..."


def trial_rows(view: JudgeView, trial: Trial, width: int, console: Console) -> list[str]:
    """The rows of one trial screen: progress, the prompt, then each option under a rule."""
    glyphs = console.glyphs
    gutter_width = 4
    text_width = max(MIN_WIDTH - gutter_width, width - gutter_width)
    prose_width = min(text_width, MAX_PROSE_WIDTH)
    sep = glyphs.sep
    rows = [console.bold(f"trial {trial.number} of {view.total} {sep} {view.question}"), ""]
    rows.append(console.bold("Prompt"))
    for line in render_text(trial.prompt, prose_width, text_width, glyphs.more):
        rows.append(f"  {glyphs.bar} {line}".rstrip())
    for (header, gutter), option in zip(option_labels(view.protocol), trial.options, strict=True):
        title = f"{glyphs.rule * 2} {header} "
        rows += ["", console.bold(title + glyphs.rule * max(0, width - display_width(title)))]
        body = render_text(option, prose_width, text_width, glyphs.more) or [""]
        rows.extend(f"{gutter:>1} {glyphs.bar} {line}".rstrip() for line in body)
    return rows


# --------------------------------------------------------------------------- closing words


def quit_message(view: JudgeView, result: SessionResult) -> str:
    """What the judge reads after stopping early (q, Ctrl-C, end of input)."""
    saved = f"{result.judged} of {result.total} trials judged and saved"
    if result.next_trial is None:
        return f"{saved}."
    again = f"run the same command again to continue at trial {result.next_trial}"
    if view.sequential:
        return f"{saved}; {again}."
    return (
        f"{saved}; {again}. This design has a fixed number of trials: until all are "
        "judged, the analysis reports the run as void."
    )


def closing_message(view: JudgeView, result: SessionResult, analyze_command: str) -> str:
    """The last line of a session. It never states a score: bt-analyze does that."""
    if result.status == "quit":
        return f"Stopped: {quit_message(view, result)}"
    if result.status == "stopped":
        return (
            f"The session is complete after {result.judged} of {result.total} trials "
            f"(this sequential design stops by itself). Run {analyze_command} to see the result."
        )
    return f"All {result.total} trials judged. Run {analyze_command} to see the result."


def strip_ansi(text: str) -> str:
    """Text as a person sees it (used by tests of the rendered screen)."""
    return _ANSI.sub("", text)
