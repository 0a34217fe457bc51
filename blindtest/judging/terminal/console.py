"""The terminal: writes, line reads with GNU readline, single-key reads (termios cbreak; on
Windows the console's own ``msvcrt.getwch``), the size, and a SIGWINCH handler that repaints
the current screen when the terminal is resized (where there is SIGWINCH).
No curses. Whatever is typed is cleaned of control characters and escape sequences before
anyone sees it; when stdin is not a terminal every read takes one line, so a session can be
scripted. It knows nothing of trials or picks.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from types import ModuleType
from typing import TextIO

from blindtest.errors import BadInput
from blindtest.judging.terminal.layout import ASCII_GLYPHS, MIN_HEIGHT, MIN_WIDTH, UNICODE_GLYPHS
from blindtest.model.picks import clean_text

#: SGR parameters of the styles a response's markdown is drawn in: bold, italic, struck
#: through, code in cyan, and markup (fences, rules, a link's address) dimmed.
_STYLE_CODES = {"strong": "1", "em": "3", "s": "9", "code": "36", "dim": "2"}


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

    def paint(self, text: str, styles: frozenset[str]) -> str:
        """``text`` in ``styles`` (strong, em, s, code, dim) on a terminal; as it is
        elsewhere. ``text`` is sanitized already: these are the only codes sent."""
        codes = ";".join(_STYLE_CODES[s] for s in sorted(styles) if s in _STYLE_CODES)
        if not self.interactive or not codes:
            return text
        return f"\x1b[{codes}m{text}\x1b[0m"

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

    def read_line(self, prompt: str, history: list[str] | None = None, *, initial: str = "") -> str:
        """One line, cleaned (``blindtest.model.picks.clean_text``); EOFError at end of input.

        On a terminal the line is edited with readline; ``history`` (the earlier answers to
        this kind of question) is what the up arrow recalls, and the answer is added to it;
        ``initial`` is typed in already, to be kept or edited (a reason given before).
        """
        if not self.interactive:
            self.write(prompt)
            line = self.stdin.readline()
            if not line:
                raise EOFError
            return clean_text(line)
        typed = initial
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
            with _ctrl_c_as_a_key(self.stdin.fileno()):
                line = input(prompt)
        finally:
            self._editing = False
            readline.set_pre_input_hook(None)
        if _INTERRUPT in line:  # Ctrl-C, read as a key (``_ctrl_c_as_a_key``)
            raise KeyboardInterrupt
        return line

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


#: What readline puts on the line for Ctrl-C while a line is read (``_ctrl_c_as_a_key``).
_INTERRUPT = "\x03"


@contextmanager
def _ctrl_c_as_a_key(fd: int) -> Iterator[None]:
    """While a key or a line is read, Ctrl-C reaches the reader as a key (the terminal's
    interrupt character off): readline ends the line with ``_INTERRUPT``, a key read gets
    ``\\x03``, and the caller raises KeyboardInterrupt. As a signal it could be lost: the
    terminal drops the keys typed ahead of it, and readline, woken by a key it then cannot
    read, waits for another key and looks at no signal meanwhile (a Ctrl-C right after a key
    did nothing until the next key). Ctrl-Z and Ctrl-\\ stay signals."""
    try:
        import termios
    except ImportError:  # pragma: no cover - no termios: Windows, where readline is absent too
        yield
        return
    try:
        saved = termios.tcgetattr(fd)
        disabled = os.fpathconf(fd, "PC_VDISABLE")  # what turns a special character off
    except (termios.error, OSError, ValueError):
        yield
        return
    keys = list(saved[6])
    keys[termios.VINTR] = bytes([disabled])
    termios.tcsetattr(fd, termios.TCSANOW, [*saved[:6], keys])
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


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
        # Ctrl-C (a key while a line is read, ``_ctrl_c_as_a_key``): shown as "^C" where it was
        # typed, and the line ends there.
        readline.parse_and_bind('"\\C-c": "\\C-e\\C-v\\C-c\\C-m"')
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
        # TCSANOW rather than the default TCSAFLUSH, which would throw away keys typed ahead.
        # Ctrl-C comes as a key (``_ctrl_c_as_a_key``), read as KeyboardInterrupt.
        tty.setcbreak(fd, termios.TCSANOW)
        with _ctrl_c_as_a_key(fd):
            yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


#: The second code Windows' console gives for a named key (after "\x00" or "\xe0").
_WINDOWS_KEYS = {"H": "up", "P": "down", "I": "pgup", "Q": "pgdn", "G": "home", "O": "end"}


def _read_windows_key() -> str:
    """One key from Windows' console (no termios there): ``msvcrt.getwch``."""
    if sys.platform != "win32":
        raise OSError(errno.ENOTTY, "not Windows' console")
    import msvcrt

    char = msvcrt.getwch()
    if char in ("\x00", "\xe0"):  # a named key: its code follows
        return _WINDOWS_KEYS.get(msvcrt.getwch(), "escape")
    if char in ("\x04", "\x1a"):  # Ctrl-D, Ctrl-Z
        raise EOFError
    if char == "\x03":
        raise KeyboardInterrupt
    return _KEY_NAMES.get(char, char if char != "\x1b" else "escape")


def _read_tty_key(fd: int) -> str:
    if sys.platform == "win32":
        return _read_windows_key()
    with _cbreak(fd):
        data = _read_tty(fd, 16)
    if not data or data == b"\x04":
        raise EOFError
    if b"\x03" in data:  # Ctrl-C, read as a key (with any key typed just before it)
        raise KeyboardInterrupt
    text = data.decode("utf-8", errors="replace")
    return _KEY_NAMES.get(text, text[:1] if not text.startswith("\x1b") else "escape")
