"""The lines a terminal judge types after choosing: the pair nicknames (before the first pick),
a one-line reason and the design's extra yes/no questions. An answer given before (an undo, a
change from the history) is offered again: the reason typed in to keep or edit, each yes/no
kept with Enter. ``q`` at any of these asks whether to stop (the session's ``on_quit``). Knows
nothing of the driver: the session builds the pick from what is read here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from blindtest.judging.answers import nickname_problem
from blindtest.judging.terminal.console import Console
from blindtest.judging.terminal.layout import wrap_prose_line
from blindtest.judging.terminal.questions import history_rows
from blindtest.model.picks import ExtraAnswer, JudgeView, Pick

__all__ = ["Asker"]

NICKNAMES_NOW = (
    "Give the two models nicknames now: short words you will recognise, such as fox and owl. "
    "Nothing tells you yet which model wrote which option, so your choice for this first trial "
    "is arbitrary: either nickname is right. From the next trial on, say each time which "
    "nickname option 1 carries; consistency is what is scored."
)


class Asker:
    """Reads the typed parts of an answer on ``console``; ``width`` is the prose width now,
    ``beside`` whether the options stand side by side (left/right rather than option 1/2)."""

    def __init__(
        self,
        console: Console,
        view: JudgeView,
        *,
        width: Callable[[], int],
        beside: Callable[[], bool],
        on_quit: Callable[[], None],
        total: int | None = None,
    ) -> None:
        self.console = console
        self.view = view
        #: The trials this judge is asked (a person's share of a people's sample; else all).
        self.total = total if total is not None else view.total
        self.width = width
        self.beside = beside
        self.on_quit = on_quit
        self.reasons: list[str] = []  # what the up arrow recalls at the reason prompt

    def _say(self, text: str) -> None:
        self.console.write("\n".join(wrap_prose_line(text, self.width())) + "\n")

    def nicknames(self) -> tuple[str, str]:
        self._say(NICKNAMES_NOW)
        first = self.nickname("First nickname: ", None)
        return first, self.nickname("Second nickname: ", first)

    def nickname(self, prompt: str, other: str | None) -> str:
        while True:
            name = self.console.read_line(prompt)
            if name.lower() == "q":
                self.on_quit()
                continue
            problem = nickname_problem(name, other)
            if problem is None:
                return name
            self.console.write(f"{problem}\n")

    def reason(self, where: str, earlier: Pick | None = None) -> str | None:
        """A one-line reason (``where`` names the trial when one is needed and not given)."""
        need = self.view.require_reason
        prompt = "Reason, one line" + (": " if need else " (Enter to skip): ")
        given = earlier.reason if earlier is not None and earlier.reason else ""
        while True:
            reason = self.console.read_line(prompt, history=self.reasons, initial=given)
            if reason.lower() == "q":
                self.on_quit()
                continue
            if reason:
                return reason
            if not need:
                return None
            self.console.write(f"A one-line reason is needed ({where}).\n")

    def extras(self, earlier: Pick | None = None) -> dict[str, ExtraAnswer]:
        """The design's extra questions: those asked of each option (y or n for option 1, then
        option 2: left and right in the record), then those asked once per comparison."""
        answers: dict[str, ExtraAnswer] = {}
        given = earlier.answers if earlier is not None and earlier.answers else {}
        names = ("left", "right") if self.beside() else ("option 1", "option 2")
        for question in self.view.extra_questions_per_option:
            self._say(f"{question} (y or n for each option)")
            before = given.get(question)
            each = before if isinstance(before, Mapping) else {}
            left, right = (
                self.yes_no(f"  {name} [y/n] ", each.get(side))
                for name, side in zip(names, ("left", "right"), strict=True)
            )
            answers[question] = {"left": left, "right": right}
        for question in self.view.extra_questions:
            before = given.get(question)
            once = before if isinstance(before, bool) else None
            answers[question] = self.yes_no(f"{question} [y/n] ", once)
        return answers

    def word_to_change(
        self, words: Sequence[Pick], words_of: Callable[[int | str], str]
    ) -> Pick | None:
        """Show the picks so far (``history_rows``) and read which to change: its record, or
        None when the judge goes back (Enter)."""
        c = self.console

        def paint() -> None:
            c.clear()
            title = c.bold(f"Your picks so far: {len(words)} of {self.total}")
            rows = history_rows(self.view, words, self.width(), c.glyphs.sep, words_of)
            c.write("\n".join([title, "", *rows]) + "\n\n")

        c.show(paint)
        while True:
            answer = c.read_line("Change which trial? (its number; Enter goes back) ")
            if not answer:
                return None
            word = next((w for w in words if str(w.trial) == answer.strip()), None)
            if word is not None:
                return word
            c.write(f"{answer!r} is not a trial you have judged: type one of the numbers.\n")

    def yes_no(self, prompt: str, default: bool | None = None) -> bool:
        if default is not None:
            prompt = prompt.replace("[y/n]", f"[y/n, Enter keeps {'y' if default else 'n'}]")
        while True:
            text = self.console.read_line(prompt).lower()
            if not text and default is not None:
                return default
            if text in ("y", "yes", "n", "no"):
                return text.startswith("y")
            if text == "q":
                self.on_quit()
                continue
            self.console.write("Type y or n.\n")
