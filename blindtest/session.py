"""The interactive judging session in a terminal, for a human judge.

It owns the screen: text sanitized and wrapped to the terminal width (code blocks and tables
never re-flowed), a small pager for trials taller than the terminal, the questions and keys
of each protocol, the fatigue prompt, and the quit / resume / end messages.

It must never show anything that depends on the arrangement: it gets a ``JudgeView`` (the
blinded trials and the question) and a ``Recorder`` from ``blindtest.judge``, and learns only
"go on" or "stop". No score, no correctness, no e-value and no timing is shown. Every pick is
appended (by the recorder) before the next trial is drawn, so quitting in any way keeps it.

No curses: plain reads and writes; GNU readline (stdlib ``readline``) edits typed lines,
termios reads single keys in the pager, and a SIGWINCH handler repaints the screen when the
terminal is resized. Whatever is typed is cleaned of control characters and escape sequences
before it can reach a pick. When stdin is not a terminal, answers are read line by line, so a
session can be scripted.

``u`` takes back the last pick while the next trial is shown: the trial is judged again and
the new pick is appended with ``correction: true`` (the file stays append-only).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import sys
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import partial
from types import ModuleType
from typing import TextIO

from blindtest.errors import BadInput, Interrupted
from blindtest.judge import PREFERENCE_PICKS, JudgeView, Pick, Recorder, Trial, clean_text
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

#: Terminal widths (columns) from which the options stand side by side, each column wrapped
#: on its own: two columns need 160, three need 210 (about 65 characters of text each).
SIDE_BY_SIDE_FROM = {"triangle": 210, "pair": 160, "preference": 160}
COLUMN_GAP = 3


def side_by_side(protocol: str, width: int) -> bool:
    """Whether a screen ``width`` columns wide (one less than the terminal) shows the options
    side by side."""
    return width + 1 >= SIDE_BY_SIDE_FROM[protocol]


def option_labels(protocol: str, beside: bool = False) -> tuple[tuple[str, str], ...]:
    """(header, gutter) for each option in display order.

    "Left" and "Right" are used only when the options really stand left and right; stacked,
    the preference options are "Option 1" (the pick "left") and "Option 2" (the pick "right").
    """
    if protocol == "preference" and beside:
        return (("Left", "L"), ("Right", "R"))
    if protocol in ("pair", "preference"):
        return (("Option 1", "1"), ("Option 2", "2"))
    return (("1", "1"), ("2", "2"), ("3", "3"))


#: Keys the question line gives a meaning of its own (u: take back; v: view; b: back).
COMMAND_KEYS = frozenset({"q", "v", "b", "u", "?"})
#: Words a nickname may not be, because they are keys or preference answers.
RESERVED_NICKNAMES = frozenset({"1", "2", "3", *COMMAND_KEYS, *PREFERENCE_PICKS})


def nickname_keys(nicknames: tuple[str, str]) -> tuple[str | None, str | None]:
    """One letter per nickname that cannot be misread: the first letter of each, else its
    next letter when the two collide or the letter is a command key; None when a nickname
    has no free letter (it is then typed whole)."""
    keys: list[str | None] = []
    for name in nicknames:
        other = [n.lower() for n in nicknames if n != name]
        key = next(
            (
                ch
                for ch in name.lower()
                if ch.isalpha() and ch not in COMMAND_KEYS and ch not in keys and ch not in other
            ),
            None,
        )
        keys.append(key)
    return keys[0], keys[1]


def answer_keys(protocol: str, nicknames: tuple[str, str] | None, beside: bool = False) -> str:
    if protocol == "preference":
        if beside:
            return "l = left, r = right, t = tie"
        return "1 = option 1, 2 = option 2, t = tie"
    if protocol == "pair":
        if nicknames is None:
            return "nicknames first"
        keys = nickname_keys(nicknames)
        return ", ".join(
            f"{key or name} = option 1 is {name}" for key, name in zip(keys, nicknames, strict=True)
        )
    return "1, 2 or 3"


def pick_words(protocol: str, pick: int | str, beside: bool = False) -> str:
    """A pick as the judge made it, in the words of the screen."""
    if protocol == "preference" and not beside and pick in ("left", "right"):
        return "option 1" if pick == "left" else "option 2"
    if protocol == "pair":
        return f"option 1 is {pick}"
    return str(pick)


def parse_answer(protocol: str, text: str, nicknames: tuple[str, str] | None) -> int | str | None:
    """The pick an answer stands for, or None when it is not an answer.

    Preference: option 1 is the pick "left" and option 2 "right", whether the options stand
    side by side or one above the other, so 1/l and 2/r are the same answer."""
    answer = text.strip().lower()
    if protocol == "triangle":
        return int(answer) if answer in ("1", "2", "3") else None
    if protocol == "preference":
        words = {"l": "left", "1": "left", "r": "right", "2": "right", "t": "tie"}
        return words.get(answer, answer if answer in PREFERENCE_PICKS else None)
    if nicknames is None:
        return None
    choices = {
        key: name for key, name in zip(nickname_keys(nicknames), nicknames, strict=True) if key
    }
    choices.update({name.lower(): name for name in nicknames})
    return choices.get(answer)


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
        "pair": "Option 1 and option 2 come from different models. You give the two models "
        "nicknames at the first trial (that first choice is arbitrary), then say each time "
        "which nickname option 1 carries. What is scored is whether you are consistent.",
        "preference": "Say which response you would rather use, or t for a tie, then give a "
        "one-line reason. Option 1 is the left one when they stand side by side.",
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
        "back, g goes to the top, 1, 2 or 3 jumps to that option. At a question: v shows the "
        "trial again, v2 from option 2, b the page before, u takes back your last pick.",
        "Typing: arrow keys, Home, End and backspace edit the line before Enter.",
        "q stops the session. Every answer given so far is saved; running the same command "
        "again continues at the first trial you have not judged. Ctrl-C stops too.",
        "Lines that start with a continuation mark were cut at the screen edge: code is "
        "never re-wrapped.",
    ]


# --------------------------------------------------------------------------- the terminal


class _Resized(Exception):
    """The terminal changed size while a key or a line was awaited."""


class InputEnded(BadInput):
    """Input ended (stdin closed, Ctrl-D) before the session finished: exit 2, picks kept."""


class Console:
    """The terminal: writes, line reads (with line editing), single-key reads and the size.

    On a terminal, lines are read through GNU readline (arrows, Home/End, backspace edit the
    line), and a resize repaints the current screen at once: a screen is painted through
    ``show``, which remembers how to paint it again. When stdin is not a terminal every read
    takes one line, so a session can be scripted. Whatever is typed is cleaned of control
    characters and escape sequences before anyone sees it.
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
        self._paint: Callable[[], None] | None = None
        self._below = ""
        self._reading = False
        self._resized = False
        self._editing = False
        self._typed = ""

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
        if self._paint is not None:
            self._below += text

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self.interactive else text

    def clear(self) -> None:
        if self.interactive:
            self.write("\x1b[H\x1b[2J")

    # ------------------------------------------------------------- screens and resizes

    def show(self, paint: Callable[[], None]) -> None:
        """Paint a screen (``paint`` clears and draws it at the current size) and keep it, so
        a resize paints it again, with what was written under it since."""
        self._paint = None
        paint()
        if self.interactive:
            self._paint = paint
            self._below = ""

    def repaint(self) -> None:
        if self._paint is None:
            return
        paint, below = self._paint, self._below
        self._paint = None
        paint()
        self._paint = paint
        self._below = ""
        self.write(below)

    @contextmanager
    def resizing(self) -> Iterator[None]:
        """While inside, a terminal resize (SIGWINCH) repaints the screen at once."""
        if not self.interactive or not hasattr(signal, "SIGWINCH"):
            yield
            return
        try:
            saved = signal.signal(signal.SIGWINCH, self._on_resize)
        except ValueError:  # not the main thread: no resize handling
            yield
            return
        try:
            yield
        finally:
            signal.signal(signal.SIGWINCH, saved)
            self._paint = None

    def _on_resize(self, signum: int, frame: object) -> None:
        if not self._reading:
            self._resized = True  # repainted before the next read
            return
        if self._editing and _readline is not None:
            self._typed = _readline.get_line_buffer()
        raise _Resized

    def _awaiting(self, read: Callable[[], str]) -> str:
        self._reading = True
        try:
            if self._resized:
                raise _Resized
            return read()
        finally:
            self._reading = False

    # ------------------------------------------------------------- reading

    def read_line(self, prompt: str, history: list[str] | None = None) -> str:
        """One line, cleaned (``blindtest.judge.clean_text``); EOFError at end of input.

        On a terminal the line is edited with readline; ``history`` (the earlier answers to
        this kind of question) is what the up arrow recalls, and the answer is added to it.
        """
        if not self.interactive:
            self.write(prompt)
            line = self.stdin.readline()
            if not line:
                raise EOFError
            return clean_text(line)
        typed = ""
        while True:
            try:
                raw = self._awaiting(partial(self._read_edited, prompt, typed, history))
            except _Resized:
                self._resized = False
                typed, self._typed = self._typed, ""
                if self._paint is None:
                    self.write("\n")  # nothing to repaint: the prompt again, on a line of its own
                self.repaint()
                continue
            line = clean_text(raw)
            if self._paint is not None:
                self._below += f"{prompt}{line}\n"
            if history is not None and line and (not history or history[-1] != line):
                history.append(line)
            return line

    def _read_edited(self, prompt: str, typed: str, history: list[str] | None) -> str:
        readline = _load_readline() if self.stdin is sys.stdin else None
        if readline is None or self.stdout is not sys.stdout:
            self.write(prompt)
            return _read_tty_line(self.stdin.fileno())
        readline.clear_history()
        for item in history or ():
            readline.add_history(item)

        def insert() -> None:
            readline.insert_text(typed)
            readline.redisplay()

        readline.set_pre_input_hook(insert if typed else None)
        self._editing = True
        try:
            return input(prompt)
        finally:
            self._editing = False
            readline.set_pre_input_hook(None)

    def read_key(self, prompt: str, *, resize_key: bool = False) -> str:
        """One key on a terminal (space, enter, letters, named arrows); a line otherwise.

        A resize repaints the screen and waits again, or, with ``resize_key``, returns
        "resize" so the caller can lay its screen out anew."""
        if not self.interactive:
            return self.read_line(prompt)
        while True:
            try:
                return self._awaiting(lambda: self._key(prompt))
            except _Resized:
                self._resized = False
                if resize_key:
                    return "resize"
                self.repaint()

    def _key(self, prompt: str) -> str:
        self.stdout.write(prompt)
        self.stdout.flush()
        return _read_tty_key(self.stdin.fileno())


_readline: ModuleType | None = None
_INERT_KEYS = (
    *(f"\\eO{letter}" for letter in "PQRS"),  # F1-F4
    *(f"\\e[{code}~" for code in (2, 5, 6, 15, 17, 18, 19, 20, 21, 23, 24)),  # Ins, PgUp/Dn, F5-F12
    *(f"\\e[1{code}~" for code in (1, 2, 3, 4)),  # F1-F4 on some terminals
    "\\e[Z",  # shift-tab
)


def _load_readline() -> ModuleType | None:
    """GNU readline, loaded at the first line read on a terminal (not at import: the other
    commands have no use for it)."""
    global _readline
    if _readline is None:
        try:
            import readline
        except ImportError:  # pragma: no cover - CPython on Linux and macOS has it
            return None
        # Tab is typed as a space (cleaned), not a file-name completion; keys with no
        # meaning on a line (function keys, Insert, page keys) insert nothing, rather than
        # the tail of their escape sequence ("~").
        readline.parse_and_bind("tab: tab-insert")
        readline.set_completer(None)
        for sequence in _INERT_KEYS:
            readline.parse_and_bind(f'"{sequence}": ""')
        _readline = readline
    return _readline


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _read_tty_line(fd: int) -> str:
    # Without readline: os.read, not input(), so the same unbuffered descriptor serves
    # single-key reads and no keystroke is lost in a Python-side buffer between the two modes.
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


class _Quit(Exception):
    """The judge chose to stop (after confirming, for a fixed design)."""


class _Undo(Exception):
    """The judge takes back the last pick."""


@dataclass(frozen=True, slots=True)
class SessionResult:
    """How a session ended: "complete", "stopped" (sequential rule met) or "quit".

    ``kept_trial`` is a trial whose pick the judge began to take back (``u``) without picking
    again: the earlier pick stands."""

    status: str
    judged: int
    total: int
    judged_now: int
    next_trial: int | None
    kept_trial: int | None = None


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class _Screen:
    """One trial's rows, where each option starts (``anchors``) and where the pager stands;
    laid out again when the width changes."""

    render: Callable[[int], tuple[list[str], list[int]]]
    width: int = 0
    rows: list[str] = field(default_factory=list)
    anchors: list[int] = field(default_factory=list)
    top: int = 0

    def rows_for(self, width: int) -> list[str]:
        if width != self.width:
            self.width = width
            self.rows, self.anchors = self.render(width)
        return self.rows


class Session:
    """One sitting of one human judge. ``run`` returns how it ended, or raises ``Interrupted``
    (exit 130) on Ctrl-C and ``InputEnded`` (exit 2) at the end of input, after every
    completed pick has been saved."""

    def __init__(
        self,
        view: JudgeView,
        recorder: Recorder,
        console: Console,
        *,
        earlier_nicknames: tuple[str, str] | None = None,
        clock: Callable[[], str] = utc_now,
        fatigue_every: int = FATIGUE_EVERY,
        resume_command: str = "the same command",
    ) -> None:
        self.view = view
        self.recorder = recorder
        self.console = console
        self.judge = recorder.judge
        self.nicknames = earlier_nicknames
        self.clock = clock
        self.fatigue_every = fatigue_every
        self.resume_command = resume_command
        self.judged_now = 0
        self.remaining: list[Trial] = []
        self._last: tuple[Trial, int | str] | None = None  # the pick u takes back
        self._correcting: tuple[Trial, int | str] | None = None
        self._fatigue_at = 0
        self._reasons: list[str] = []

    # ----------------------------------------------------------------- flow

    def run(self, remaining: Sequence[Trial]) -> SessionResult:
        self.remaining = list(remaining)
        try:
            with self.console.resizing():
                return self._run()
        except _Quit:
            return self._result("quit")
        except KeyboardInterrupt:
            self.console.write("\n")  # the message goes under the ^C, not beside it
            raise Interrupted(self._interrupted("interrupted")) from None
        except EOFError:
            self.console.write("\n")
            raise InputEnded(self._input_ended()) from None

    def _run(self) -> SessionResult:
        if self.recorder.done:
            return self._result("stopped" if self.recorder.stopped_early else "complete")
        self._intro()
        while self.remaining:
            trial = self.remaining[0]
            if self._due_a_break():
                self._fatigue()
            try:
                pick = self._judge_trial(trial)
            except _Undo:
                assert self._last is not None
                self._correcting, self._last = self._last, None
                self.remaining.insert(0, self._correcting[0])
                continue
            correction = self._correcting is not None
            self._correcting = None
            self.remaining.pop(0)
            if not correction:
                self.judged_now += 1
            self._last = (trial, pick.pick)
            if self.recorder.record(replace(pick, correction=correction)):
                break
        self.console.clear()
        return self._result("stopped" if self.recorder.stopped_early else "complete")

    def _due_a_break(self) -> bool:
        if self._correcting is not None or not self.judged_now:
            return False
        if self.judged_now % self.fatigue_every or self._fatigue_at == self.judged_now:
            return False
        self._fatigue_at = self.judged_now
        return True

    def _result(self, status: str) -> SessionResult:
        kept = self._correcting[0].number if self._correcting is not None else None
        waiting = [t.number for t in self.remaining if t.number != kept]
        return SessionResult(
            status=status,
            judged=self.recorder.judged,
            total=self.view.total,
            judged_now=self.judged_now,
            next_trial=waiting[0] if waiting else None,
            kept_trial=kept,
        )

    def _interrupted(self, what: str) -> str:
        result = self._result("quit")
        return f"{what}; {quit_message(self.view, result)}"

    def _input_ended(self) -> str:
        result = self._result("quit")
        n = result.judged
        kept = f"{n} pick{'' if n == 1 else 's'} kept"
        if result.kept_trial is not None:
            kept += f" (the earlier pick for trial {result.kept_trial} stands)"
        if self.console.interactive:
            return (
                f"input ended (Ctrl-D) before the session finished; {kept}; rerun "
                f"{self.resume_command} to continue"
            )
        return (
            f"stdin closed before the session finished; {kept}; rerun "
            f"{self.resume_command} in a terminal to continue"
        )

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

    def _width(self) -> int:
        return self.console.size()[0] - 1

    def _beside(self) -> bool:
        return side_by_side(self.view.protocol, self._width())

    def _ask_nicknames(self) -> tuple[str, str]:
        c = self.console
        c.write(
            "\n".join(
                wrap_prose_line(
                    "Give the two models nicknames now: short words you will recognise, such "
                    "as fox and owl. Nothing tells you yet which model wrote which option, so "
                    "your choice for this first trial is arbitrary: either nickname is "
                    "right. From the next trial on, say each time which nickname option 1 "
                    "carries; consistency is what is scored.",
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
            name = self.console.read_line(prompt)
            if name.lower() == "q":
                self._confirm_quit()
                continue
            problem = nickname_problem(name, other)
            if problem is None:
                return name
            self.console.write(f"{problem}\n")

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
        text = (
            f"You have judged {self.judged_now} trials in this sitting. Judgement gets worse "
            f"after about {self.fatigue_every} comparisons in a row: consider stopping now and "
            "resuming later. Your picks are saved, and running the same command again "
            f"continues at trial {self.remaining[0].number}."
        )
        self.console.clear()
        self.console.write("\n".join(wrap_prose_line(text, self._width())) + "\n")

    def _confirm_quit(self) -> None:
        """Raise ``_Quit`` if the judge confirms; a fixed design warns that a run left
        incomplete is reported as void. Returns when the judge decides to go on."""
        if self.view.sequential:
            raise _Quit
        c = self.console
        result = self._result("quit")
        kept = (
            f" Your pick for trial {result.kept_trial} was not changed: the earlier pick stands."
            if result.kept_trial is not None
            else ""
        )
        text = (
            f"Stop now? {self.recorder.judged} of {self.view.total} trials are judged and "
            f"saved.{kept} This design has a fixed number of trials: if it is never finished, "
            "the analysis reports the run as void. Run the same command again later to "
            f"continue at trial {result.next_trial or self.view.total}."
        )
        c.write("\n" + "\n".join(wrap_prose_line(text, self._width())) + "\n")
        if c.read_line("Stop now? [y/N] ").lower() in ("y", "yes"):
            raise _Quit

    # ----------------------------------------------------------------- one trial

    def _judge_trial(self, trial: Trial) -> Pick:
        screen = _Screen(render=lambda width: trial_layout(self.view, trial, width, self.console))
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

    def _notice(self, trial: Trial) -> str:
        """A line under the question: a correction under way, or the arbitrary first pair."""
        if self._correcting is not None and self._correcting[0] is trial:
            earlier = pick_words(self.view.protocol, self._correcting[1], self._beside())
            return (
                f"Taking back your pick for trial {trial.number} ({earlier}): pick again. "
                "If you stop now, the earlier pick stands."
            )
        if self.view.protocol == "pair" and self._arbitrary_first:
            return "This first choice is arbitrary: either nickname is right for trial 1."
        return ""

    @property
    def _arbitrary_first(self) -> bool:
        return self.recorder.judged == 0 and self.judged_now == 0

    def _question_rows(self, trial: Trial, width: int) -> list[str]:
        keys = answer_keys(self.view.protocol, self.nicknames, self._beside())
        sep = self.console.glyphs.sep
        undo = ""
        if self._last is not None and self._can_undo():
            undo = f" {sep} u take back trial {self._last[0].number}"
        rows = wrap_prose_line(self.view.question, width)
        notice = self._notice(trial)
        if notice:
            rows += wrap_prose_line(notice, width)
        rows += wrap_prose_line(f"{keys} {sep} v view again{undo} {sep} ? help {sep} q stop", width)
        return rows

    def _can_undo(self) -> bool:
        return self._last is not None and self.recorder.can_correct(self._last[0].number)

    def _progress(self, trial: Trial) -> str:
        return f"trial {trial.number} of {self.view.total}"

    def _ask_choice(self, trial: Trial, screen: _Screen) -> int | str:
        hint = ""
        self._show(trial, screen, start=0)
        if self.view.protocol == "pair" and self.nicknames is None:
            self.nicknames = self._ask_nicknames()
            self._redraw(trial, screen, None, "")
        while True:
            answer = self.console.read_line(f"{self._progress(trial)} > ")
            value = parse_answer(self.view.protocol, answer, self.nicknames)
            if value is not None:
                return value
            start, hint = self._command(answer.lower(), trial, screen)
            self._redraw(trial, screen, start, hint)

    def _command(self, answer: str, trial: Trial, screen: _Screen) -> tuple[int | None, str]:
        """Handle a non-answer at the question: where to redraw from, and the hint to show."""
        if answer == "q":
            self._confirm_quit()
            return None, ""
        if answer == "u":
            if self._can_undo():
                raise _Undo
            return None, "there is no pick to take back: u takes back the last pick only"
        if answer == "v":
            return 0, ""
        if re.fullmatch(r"v[1-3]", answer) and int(answer[1]) <= len(trial.options):
            screen.rows_for(self._width())
            return screen.anchors[int(answer[1]) - 1], ""
        if answer == "b":
            page = self.console.size()[1] - 1
            return max(0, screen.top - page), ""
        if answer == "?":
            self._show_help()
            return None, ""
        keys = answer_keys(self.view.protocol, self.nicknames, self._beside())
        shown = answer if len(answer) <= 12 else answer[:12] + "..."
        what = f"{shown!r} is not an answer" if answer else "an answer is needed"
        unsure = "; guess if unsure" if self.view.protocol == "triangle" else ""
        return None, f"{what}: type {keys}{unsure}; ? for help"

    def _redraw(self, trial: Trial, screen: _Screen, start: int | None, hint: str) -> None:
        if start is not None:
            self._show(trial, screen, start=start, hint=hint)
        elif self.console.interactive:
            self.console.show(lambda: self._draw_last(trial, screen, hint))
        else:
            self._write_footer(trial, hint)

    def _show_help(self) -> None:
        c = self.console
        c.show(self._paint_help)
        if c.interactive:
            c.read_key("\nPress any key to go back to the trial. ")
        else:
            c.write("\n")

    def _paint_help(self) -> None:
        c = self.console
        width = self._width()
        c.clear()
        rows: list[str] = [c.bold("Help"), ""]
        for paragraph in help_text(self.view.protocol, self.view.sequential):
            rows.extend([*wrap_prose_line(paragraph, width), ""])
        c.write("\n".join(rows))

    def _ask_reason(self, trial: Trial) -> str | None:
        need = self.view.require_reason
        prompt = "Reason, one line" + (": " if need else " (Enter to skip): ")
        while True:
            reason = self.console.read_line(prompt, history=self._reasons)
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
                text = self.console.read_line(f"{question} [y/n] ").lower()
                if text in ("y", "yes", "n", "no"):
                    answers[question] = text.startswith("y")
                    break
                if text == "q":
                    self._confirm_quit()
                    continue
                self.console.write("Type y or n.\n")
        return answers

    # ----------------------------------------------------------------- drawing and paging

    def _footer(self, trial: Trial, width: int, hint: str) -> list[str]:
        rows = ["", *self._question_rows(trial, width)]
        rows.append(_fit(hint, width))
        return rows

    def _write_footer(self, trial: Trial, hint: str) -> None:
        self.console.write("\n".join(self._footer(trial, self._width(), hint)) + "\n")

    def _show(self, trial: Trial, screen: _Screen, *, start: int, hint: str = "") -> None:
        """Show the trial from row ``start``: all at once when it fits, else page by page
        until its last page, which is drawn with the question under it."""
        c = self.console
        if not c.interactive:
            rows = screen.rows_for(self._width())
            c.write("\n" + "\n".join(rows[start:]) + "\n")
            self._write_footer(trial, hint)
            return
        screen.top = start
        while True:
            columns, lines = c.size()
            rows = screen.rows_for(columns - 1)
            last_top = self._last_top(trial, screen, hint)
            if screen.top >= last_top:
                c.show(lambda: self._draw_last(trial, screen, hint))
                return
            self._page(trial, screen, rows, lines - 1, last_top)

    def _last_top(self, trial: Trial, screen: _Screen, hint: str) -> int:
        """The first row of the last page: the one drawn with the question under it."""
        columns, lines = self.console.size()
        rows = screen.rows_for(columns - 1)
        body = max(1, lines - len(self._footer(trial, columns - 1, hint)) - 1)
        return max(0, len(rows) - body)

    def _draw_last(self, trial: Trial, screen: _Screen, hint: str) -> None:
        c = self.console
        width = self._width()
        rows = screen.rows_for(width)
        screen.top = self._last_top(trial, screen, hint)
        c.clear()
        c.write("\n".join(rows[screen.top :]) + "\n")
        c.write("\n".join(self._footer(trial, width, hint)) + "\n")

    def _page(
        self, trial: Trial, screen: _Screen, rows: list[str], page: int, last_top: int
    ) -> None:
        """Draw one page above a status line and move ``screen.top`` by the key pressed."""
        c = self.console
        top = screen.top
        c.clear()
        c.write("\n".join(rows[top : top + page]) + "\n")
        sep = c.glyphs.sep
        count = len(trial.options)
        status = (
            f"-- {self._progress(trial)} {sep} rows {top + 1}-{min(top + page, len(rows))} of "
            f"{len(rows)} {sep} space more {sep} b back {sep} 1-{count} jump {sep} "
            "q stop --"
        )
        key = c.read_key(c.bold(_fit(status, c.size()[0] - 1)), resize_key=True)
        if key in ("space", "enter", "down", "pgdn", "j", "f"):
            screen.top = min(top + page, last_top)
        elif key in ("b", "up", "pgup", "k"):
            screen.top = max(0, top - page)
        elif key in ("g", "home"):
            screen.top = 0
        elif key in ("G", "end"):
            screen.top = last_top
        elif key in ("1", "2", "3") and int(key) <= count:
            screen.top = min(screen.anchors[int(key) - 1], last_top)
        elif key in ("q", "Q"):
            self._confirm_quit()
        elif key == "?":
            self._show_help()


def _fit(text: str, width: int) -> str:
    if display_width(text) <= width:
        return text
    head, _ = _take(text, max(1, width - 3))
    return head + "..."


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def trial_layout(
    view: JudgeView, trial: Trial, width: int, console: Console
) -> tuple[list[str], list[int]]:
    """The rows of one trial screen (progress, the prompt, then the options under rules,
    side by side when ``width`` allows) and the row where each option starts."""
    glyphs = console.glyphs
    gutter_width = 4
    text_width = max(MIN_WIDTH - gutter_width, width - gutter_width)
    prose_width = min(text_width, MAX_PROSE_WIDTH)
    sep = glyphs.sep
    header = _fit(f"trial {trial.number} of {view.total} {sep} {view.question}", width)
    rows = [console.bold(header), ""]
    rows.append(console.bold("Prompt"))
    for line in render_text(trial.prompt, prose_width, text_width, glyphs.more):
        rows.append(f"  {glyphs.bar} {line}".rstrip())
    beside = side_by_side(view.protocol, width)
    labels = option_labels(view.protocol, beside)
    if beside:
        rows.append("")
        count = len(trial.options)
        column = (width - COLUMN_GAP * (count - 1)) // count
        body_width = column - gutter_width
        cells = []
        for (header, gutter), option in zip(labels, trial.options, strict=True):
            title = f"{glyphs.rule * 2} {header} "
            head = title + glyphs.rule * max(0, column - display_width(title))
            body = render_text(option, min(body_width, MAX_PROSE_WIDTH), body_width, glyphs.more)
            cells.append([head, *(f"{gutter} {glyphs.bar} {line}" for line in body or [""])])
        anchor = len(rows)
        gap = " " * COLUMN_GAP
        for index in range(max(len(cell) for cell in cells)):
            parts = [_pad(cell[index] if index < len(cell) else "", column) for cell in cells]
            if index == 0:
                parts = [console.bold(part) for part in parts]
            rows.append(gap.join(parts).rstrip())
        return rows, [anchor] * count
    anchors = []
    for (header, gutter), option in zip(labels, trial.options, strict=True):
        title = f"{glyphs.rule * 2} {header} "
        rows.append("")
        anchors.append(len(rows))
        rows.append(console.bold(title + glyphs.rule * max(0, width - display_width(title))))
        body = render_text(option, prose_width, text_width, glyphs.more) or [""]
        rows.extend(f"{gutter:>1} {glyphs.bar} {line}".rstrip() for line in body)
    return rows, anchors


def trial_rows(view: JudgeView, trial: Trial, width: int, console: Console) -> list[str]:
    """The rows of one trial screen (see ``trial_layout``)."""
    return trial_layout(view, trial, width, console)[0]


# --------------------------------------------------------------------------- closing words


def quit_message(view: JudgeView, result: SessionResult) -> str:
    """What the judge reads after stopping early (q, Ctrl-C, end of input)."""
    saved = f"{result.judged} of {result.total} trials judged and saved"
    if result.kept_trial is not None:
        saved += (
            f" (your pick for trial {result.kept_trial} was not changed: the earlier pick stands)"
        )
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
