"""The pager: one trial screen shown whole when it fits, otherwise page by page above a status
line until its last page, which is drawn with the question (the footer) under it. It reads
keys through the ``Console`` and lays the screen out again when the width changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from blindtest.judging.terminal.console import Console
from blindtest.judging.terminal.layout import fit


@dataclass
class Screen:
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


@dataclass
class Pager:
    """Pages one ``screen`` on ``console``. ``footer(width, hint)`` gives the rows under the
    last page; ``label`` names the trial on the status line; ``on_quit`` and ``on_help`` are
    what q and ? do while paging."""

    console: Console
    screen: Screen
    footer: Callable[[int, str], list[str]]
    label: str
    options: int
    on_quit: Callable[[], None]
    on_help: Callable[[], None]

    def width(self) -> int:
        return self.console.size()[0] - 1

    def write_footer(self, hint: str) -> None:
        self.console.write("\n".join(self.footer(self.width(), hint)) + "\n")

    def show(self, *, start: int, hint: str = "") -> None:
        """Show the trial from row ``start``: all at once when it fits, else page by page
        until its last page, which is drawn with the question under it."""
        c, screen = self.console, self.screen
        if not c.interactive:
            rows = screen.rows_for(self.width())
            c.write("\n" + "\n".join(rows[start:]) + "\n")
            self.write_footer(hint)
            return
        screen.top = start
        while True:
            columns, lines = c.size()
            rows = screen.rows_for(columns - 1)
            last_top = self.last_top(hint)
            if screen.top >= last_top:
                c.show(lambda: self.draw_last(hint))
                return
            self.page(rows, lines - 1, last_top)

    def redraw(self, start: int | None, hint: str) -> None:
        """After a non-answer: from row ``start``, else the last page again (a terminal) or
        only the question (a script)."""
        if start is not None:
            self.show(start=start, hint=hint)
        elif self.console.interactive:
            self.console.show(lambda: self.draw_last(hint))
        else:
            self.write_footer(hint)

    def last_top(self, hint: str) -> int:
        """The first row of the last page: the one drawn with the question under it."""
        columns, lines = self.console.size()
        rows = self.screen.rows_for(columns - 1)
        body = max(1, lines - len(self.footer(columns - 1, hint)) - 1)
        return max(0, len(rows) - body)

    def draw_last(self, hint: str) -> None:
        c = self.console
        width = self.width()
        rows = self.screen.rows_for(width)
        self.screen.top = self.last_top(hint)
        c.clear()
        c.write("\n".join(rows[self.screen.top :]) + "\n")
        c.write("\n".join(self.footer(width, hint)) + "\n")

    def page(self, rows: list[str], page: int, last_top: int) -> None:
        """Draw one page above a status line and move ``screen.top`` by the key pressed."""
        c, screen = self.console, self.screen
        top = screen.top
        c.clear()
        c.write("\n".join(rows[top : top + page]) + "\n")
        sep = c.glyphs.sep
        count = self.options
        status = (
            f"-- {self.label} {sep} rows {top + 1}-{min(top + page, len(rows))} of "
            f"{len(rows)} {sep} space more {sep} b back {sep} 1-{count} jump {sep} "
            "q stop --"
        )
        key = c.read_key(c.bold(fit(status, c.size()[0] - 1)), resize_key=True)
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
            self.on_quit()
        elif key == "?":
            self.on_help()
